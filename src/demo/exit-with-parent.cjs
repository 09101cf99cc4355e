// Preloaded into the local EVM node (evm-node.ts): it ends when the process that started it does, even one
// killed outright (its IPC channel closes), so no orphan keeps the node's port.
if (process.send) process.once('disconnect', () => process.exit(0));
