// SPDX-License-Identifier: MIT
// The demo's ERC-20 (src/demo/chain.ts): OpenZeppelin's preset whose deployer may mint, with the decimals the
// currency has (USDT 6), so decimals() says what the chain sources file says. Compiled by
// scripts/chain/compile-demo-token.ts into demo-token.json (solc 0.8.26, optimizer 200 runs).
pragma solidity ^0.8.0;

import "@openzeppelin/contracts/token/ERC20/presets/ERC20PresetMinterPauser.sol";

contract DemoToken is ERC20PresetMinterPauser {
    uint8 private immutable _decimals;

    constructor(string memory name, string memory symbol, uint8 decimals_) ERC20PresetMinterPauser(name, symbol) {
        _decimals = decimals_;
    }

    function decimals() public view override returns (uint8) {
        return _decimals;
    }
}
