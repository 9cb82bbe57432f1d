export async function runIngress() {
  return { skipped: 'not implemented yet' };
}
