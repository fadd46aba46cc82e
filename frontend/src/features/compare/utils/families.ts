// The compare pickers' family chips: each toggles "<family>.*" in the kernels filter.

/** The kernels filter with `family.*` added, or taken out when it is there. */
export function toggleFamily(kernels: readonly string[], family: string): string[] {
  const pattern = `${family}.*`;
  return kernels.includes(pattern) ? kernels.filter((k) => k !== pattern) : [...kernels, pattern];
}
