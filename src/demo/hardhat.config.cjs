// The local EVM node of the tests and the demo (Hardhat's node on EDR): a fresh chain each start, blocks mined
// only when a transaction comes or a test asks (evm_mine), so "unconfirmed, then confirmed" is under control.
module.exports = {
  networks: {
    hardhat: {
      chainId: 31337,
      mining: { auto: true, interval: 0 },
      // A failed transaction is mined and its hash answered (a reverted payout is a case to test), not thrown.
      throwOnTransactionFailures: false,
      throwOnCallFailures: false,
      accounts: { count: 4 },
    },
  },
};
