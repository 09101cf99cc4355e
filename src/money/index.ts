export {
  Decimal,
  DecimalFormatError,
  isDecimalText,
  parseDecimal,
  parseNonNegativeDecimal,
  formatDecimal,
} from './decimal.ts';
export {
  MAX_DECIMALS,
  AtomicAmountError,
  MalformedAmountError,
  NegativeAmountError,
  ExcessPrecisionError,
  InvalidDecimalsError,
  toAtomicUnits,
  fromAtomicUnits,
  atomicToDecimal,
  type AtomicAmountRefusal,
} from './atomic.ts';
export {
  platformCurrency,
  currencyDecimals,
  platformCurrencies,
  type CurrencyMagnitude,
  type DecimalsLookup,
} from './currencies.ts';
