CREATE DATABASE swap_ledger_registry;
