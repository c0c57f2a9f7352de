// The spec reporter, plus one JSON line per record appended to files the environment names, so
// scripts/test-integration.mjs can close a long run with what failed and where the time went:
// - PODLIFE_FAILURES_FILE: each failure (`kind: 'failure'`, title, file, first lines of its error);
// - PODLIFE_TIMINGS_FILE: each passed or failed test's duration (`kind: 'test'`) and each file's
//   top-level suites' wall times (`kind: 'file'`, one record per suite, hooks included, so a suite
//   that starts a node pays for it here).
'use strict';
const { appendFileSync } = require('node:fs');
const Mocha = require('mocha');

const MESSAGE_LINES = 8;
const { EVENT_TEST_FAIL, EVENT_TEST_PASS, EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants;

function relative(file) {
  return file === undefined ? '' : file.replace(`${process.cwd()}/`, '');
}

class SpecWithFailureFile extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const failures = process.env.PODLIFE_FAILURES_FILE;
    if (failures !== undefined && failures !== '') {
      runner.on(EVENT_TEST_FAIL, (test, err) => {
        const text = err instanceof Error ? err.message : String(err);
        const message = text.split('\n').slice(0, MESSAGE_LINES).join('\n');
        appendFileSync(failures, `${JSON.stringify({ kind: 'failure', title: test.fullTitle(), file: relative(test.file), message })}\n`);
      });
    }
    const timings = process.env.PODLIFE_TIMINGS_FILE;
    if (timings === undefined || timings === '') return;
    const write = (record) => appendFileSync(timings, `${JSON.stringify(record)}\n`);
    const onTest = (test) => write({ kind: 'test', title: test.fullTitle(), file: relative(test.file), ms: test.duration ?? 0 });
    runner.on(EVENT_TEST_PASS, onTest);
    runner.on(EVENT_TEST_FAIL, (test) => {
      if (test.type === 'test') onTest(test);
    });
    // Each top-level suite's span, written as it ends (a run stopped midway keeps what finished);
    // the runner adds up the spans of one file.
    const started = new Map();
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (!suite.root && suite.parent?.root && suite.file !== undefined) started.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const at = started.get(suite);
      if (at !== undefined) write({ kind: 'file', file: relative(suite.file), ms: Date.now() - at });
    });
  }
}

module.exports = SpecWithFailureFile;
