// Moved down to src/money/exact.ts so the statement matcher (src/monthend) judges with the same arithmetic.
export { InexactArithmeticError, exactDifference, exactProduct, exactSum } from '../money/exact.ts';
