/**
 * `pnpm bench -- --repeat N` (bench/repeat.ts): a target is judged on its worst run.
 */
import assert from 'node:assert/strict';
import { aggregate, formatRepeated, leadingNumber } from './repeat.js';
import type { Recorded } from './verdict.js';

const PEAK = 'peak RSS during the initial sync <= 1.15x steady';
const RATE = 'evaluatePod slowest case >= 8x a JSON deep copy of the pod';

function verdict(target: string, ratio: string | undefined, pass: boolean | undefined, load = 1): Recorded {
  return { target, figure: 'peak 400 MiB', ratio, pass, load, cpus: 2 };
}

describe('bench --repeat: each target over N runs, judged on the worst', () => {
  it('reads the leading number of a ratio or figure, thousands separators included', () => {
    assert.deepEqual(leadingNumber('1.13x'), { value: 1.13, unit: 'x' });
    assert.deepEqual(leadingNumber('29.5%'), { value: 29.5, unit: '%' });
    assert.deepEqual(leadingNumber('+1,790 ms'), { value: 1790, unit: 'ms' });
    assert.deepEqual(leadingNumber('614,131 pods/s'), { value: 614131, unit: 'pods/s' });
    assert.equal(leadingNumber('not measured'), undefined);
  });

  it('reads the figure after a percentile\'s name, not the name\'s digits', () => {
    assert.deepEqual(leadingNumber('p99 965.8 ms'), { value: 965.8, unit: 'ms' });
    assert.deepEqual(leadingNumber('p99 1,220.6 ms (5000/5000 released)'), { value: 1220.6, unit: 'ms' });
    assert.deepEqual(leadingNumber('peak 357 MiB (at the end 354 MiB)'), { value: 357, unit: 'MiB' });
    assert.deepEqual(leadingNumber('-72 ms'), { value: -72, unit: 'ms' });
    assert.equal(leadingNumber('p99'), undefined);
  });

  it('gives min / median / max over the runs and PASS when every run passed', () => {
    const runs = ['1.10x', '1.04x', '1.12x', '1.08x', '1.06x'].map((r) => [verdict(PEAK, r, true)]);
    const [row] = aggregate('informer', runs);
    assert.equal(row?.min, 1.04);
    assert.equal(row?.median, 1.08);
    assert.equal(row?.max, 1.12);
    assert.equal(row?.pass, true);
    assert.equal(row?.worst, 2, 'for a <= target the highest ratio is the worst run');
  });

  it('fails the target when one run of five failed, and names that run as the worst', () => {
    const runs = [['1.10x', true], ['1.31x', false], ['1.12x', true], ['1.26x', false], ['1.06x', true]] as const;
    const [row] = aggregate('informer', runs.map(([r, p]) => [verdict(PEAK, r, p)]));
    assert.equal(row?.pass, false);
    assert.equal(row?.worst, 1);
    assert.deepEqual(row?.verdicts, [true, false, true, false, true]);
  });

  it('takes the lowest figure as the worst run of a >= target', () => {
    const runs = ['9.1x', '8.4x', '10.2x'].map((r) => [verdict(RATE, r, true)]);
    const [row] = aggregate('keystone-evaluate', runs);
    assert.equal(row?.worst, 1);
    assert.equal(row?.median, 9.1);
  });

  it('counts a run that judged nothing (it crashed) as a failure of the targets the others judged', () => {
    const runs = [[verdict(PEAK, '1.05x', true)], [], [verdict(PEAK, '1.07x', true)]];
    const [row] = aggregate('informer', runs);
    assert.equal(row?.pass, false);
    assert.equal(row?.worst, 1);
    assert.deepEqual(row?.verdicts, [true, false, true]);
    assert.equal(row?.max, 1.07, 'the missing run adds no number');
  });

  it('keeps two lines of the same wording in one run apart, and leaves a figure without a target unjudged', () => {
    const run = (a: string, b: string): Recorded[] => [verdict(PEAK, a, true), verdict(PEAK, b, true), verdict('A/A control', '1.30x', undefined)];
    const rows = aggregate('informer', [run('1.01x', '1.11x'), run('1.02x', '1.12x')]);
    assert.deepEqual(rows.map((r) => r.max), [1.02, 1.12, 1.3]);
    assert.equal(rows[2]?.pass, undefined);
    assert.match(formatRepeated(rows)[2]?.[4] ?? '', /no target/);
  });

  it('prints a figure with its unit after a space and thousands separators', () => {
    const runs = ['614,131 pods/s', '755,511 pods/s'].map((f) => [{ ...verdict('evaluatePod >= 500,000 pods/s', undefined, true), figure: f }]);
    const [line] = formatRepeated(aggregate('keystone-evaluate', runs));
    assert.equal(line?.[2], '614,131 pods/s / 684,821 pods/s / 755,511 pods/s');
    assert.equal(line?.[4], 'PASS (worst: run 1, 614,131 pods/s)');
  });

  it('prints min / median / max with the unit and the worst run', () => {
    const runs = [['1.10x', true], ['1.31x', false], ['1.12x', true]] as const;
    const [line] = formatRepeated(aggregate('informer', runs.map(([r, p], i) => [verdict(PEAK, r, p, i + 0.5)])));
    assert.equal(line?.[2], '1.1x / 1.12x / 1.31x');
    assert.equal(line?.[3], 'PASS FAIL PASS');
    assert.equal(line?.[4], 'FAIL (worst: run 2, 1.31x)');
    assert.equal(line?.[5], 'load 0.5-2.5');
  });
});
