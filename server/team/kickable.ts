// A background pass run one at a time: a kick while one runs asks for one more after it (for
// what committed meanwhile), so no kick is lost and passes never overlap within a process.
// `pass` answers whether it left work behind (a full batch): then it runs again at once.

export class Kickable {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly name: string,
    private readonly pass: () => Promise<boolean>,
    private readonly log: (line: string) => void,
  ) {}

  kick(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          while (await this.pass());
        } while (this.again);
      } catch (e) {
        this.log(`${this.name}: ${e instanceof Error ? e.message : String(e)}`);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }
}
