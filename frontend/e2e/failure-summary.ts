import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';

// CI keeps only the tail of a run's output, and the list reporter ends a failure's story with its
// attachments. This reporter runs after it and repeats, last, what failed and where: the test, the
// step's line, and the first lines of the error.
// eslint-disable-next-line no-control-regex -- the colour codes are what is removed
const ANSI_COLOUR = /\u001b\[[0-9;]*m/g;

export default class FailureSummary implements Reporter {
  private failed: string[] = [];

  onTestEnd(test: TestCase, result: TestResult): void {
    if (result.status === 'passed' || result.status === 'skipped' || result.status === test.expectedStatus) return;
    const error = result.errors[0];
    const where = error?.location ? `${error.location.file.replace(/^.*\/e2e\//, 'e2e/')}:${error.location.line}` : `${test.location.file}:${test.location.line}`;
    const message = (error?.message ?? result.status).replace(ANSI_COLOUR, '').split('\n').filter((l) => l.trim()).slice(0, 6);
    this.failed.push([`- ${test.titlePath().filter(Boolean).slice(-1)[0]} (${result.status}, ${Math.round(result.duration / 1000)} s)`, `  at ${where}`, ...message.map((l) => `  ${l}`)].join('\n'));
  }

  onEnd(result: FullResult): void {
    if (this.failed.length === 0) return;
    console.log(`\nfailed (${result.status}), in short:\n${this.failed.join('\n')}`);
  }

  printsToStdio(): boolean {
    return true;
  }
}
