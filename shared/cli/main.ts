export async function main(argv: readonly string[]): Promise<number> {
  process.stdout.write(`cairn ${argv.join(' ')}\n`);
  return 0;
}
