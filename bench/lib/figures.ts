/** How the parts turn their runs into the figures they print. */

/** a / b, to two decimals: the ratios every part prints. */
export const ratio = (a: number, b: number) => (a / b).toFixed(2);
/** The median of `values` (the upper one of an even count), as every part reports its rounds. */
export const medianOf = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
