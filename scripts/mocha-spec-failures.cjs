// The spec reporter, and each failure also appended as one JSON line to the file that
// PODLIFE_FAILURES_FILE names, so scripts/test-integration.mjs can repeat every failure of every
// release in its closing summary (the last lines of a long run are the ones a reader sees).
'use strict';
const { appendFileSync } = require('node:fs');
const Mocha = require('mocha');

const MESSAGE_LINES = 8;

class SpecWithFailureFile extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const file = process.env.PODLIFE_FAILURES_FILE;
    if (file === undefined || file === '') return;
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, (test, err) => {
      const text = err instanceof Error ? err.message : String(err);
      const message = text.split('\n').slice(0, MESSAGE_LINES).join('\n');
      const where = test.file === undefined ? '' : test.file.replace(`${process.cwd()}/`, '');
      appendFileSync(file, `${JSON.stringify({ title: test.fullTitle(), file: where, message })}\n`);
    });
  }
}

module.exports = SpecWithFailureFile;
