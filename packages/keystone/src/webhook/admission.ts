/**
 * AdmissionReview v1 for mutating webhooks: a pure handler and a node:http(s) adapter.
 *
 * Guarantees (policy in ADR 0053):
 * - a body that is not an AdmissionReview v1 with `request.uid` gets HTTP 400 and a plain
 *   message (without a uid there is nothing valid to answer; the API server then applies the
 *   webhook's failurePolicy and logs the message);
 * - a well-formed review is always answered 200 with its uid echoed; a request we should not
 *   mutate (not a Pod, DELETE) is allowed unchanged, with a warning; one we cannot read (no
 *   `request.kind`, no object) is treated as a mutator that throws, naming the missing field; a mutator that
 *   throws allows the pod unchanged with a warning by default (`failurePolicy: 'Ignore'`: podlife
 *   never blocks a pod by accident) or denies it naming the error (`'Fail'`: an injector whose
 *   patch must land);
 * - a patch is a base64 JSON patch with `patchType: JSONPatch`, and only present when non-empty;
 *   the mutator's ops are composed first (`composeOps`), so builders' ops concatenated for one
 *   pod never overwrite each other;
 * - the answer is bounded whatever the mutator returns: at most WARNINGS_MAX warnings of at
 *   most WARNING_CHARS_MAX characters, then "and N more"; nothing in the review (odd types,
 *   objects nested too deep to serialise) makes the handler throw;
 * - the controller's own mutator converts sidecars on CREATE only (containers are immutable);
 * - the HTTP adapter bounds the body (default 1 MiB) and the time (default 10 s), checks
 *   method and content type, and never lets an exception escape.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { JsonPatchOp } from '@podlife/core';
import { readLifecycle, type LifecycleOptions, type NativeRecord } from '../annotations.js';
import { readsLifecycleFields } from './decode.js';
import { writePatchJson } from './patch-json.js';
import { composed, managedLabelOps, nativeRecordOp, nativeSidecarPlanOf, restartInPlacePlanOf, type NativeSidecarPlan } from './patches.js';

/** The request of an AdmissionReview, as much of it as podlife reads. */
export interface AdmissionRequest {
  readonly uid: string;
  readonly kind?: { group?: string; version?: string; kind?: string };
  readonly operation?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly object?: unknown;
  readonly dryRun?: boolean;
}

/** The response of an AdmissionReview. */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  patch?: string;
  patchType?: 'JSONPatch';
  status?: { code?: number; message: string };
  warnings?: string[];
}

/** The AdmissionReview sent back. */
export interface AdmissionReviewOut {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

/** An answered review (200) or a body that is not one (400). */
export type AdmissionOutcome =
  | { readonly httpStatus: 200; readonly review: AdmissionReviewOut }
  | { readonly httpStatus: 400; readonly error: string };

/** What a mutation returns: patch operations, warnings, or a denial. */
export interface MutateResult {
  readonly ops?: readonly JsonPatchOp[];
  readonly warnings?: readonly string[];
  /** Deny the request with this message (for webhooks that want to enforce). */
  readonly deny?: string;
}

/**
 * What a mutator that throws means, named as the API server's own webhook setting: `Ignore`
 * allows the pod unchanged with a warning, `Fail` denies it (code 500) with the error's message.
 */
export type MutatorFailurePolicy = 'Ignore' | 'Fail';

/** The mutation a webhook applies, and what happens when it throws. */
export interface AdmissionOptions {
  /** Compute the patch for a pod. Throwing allows the pod unchanged (or denies it, see failurePolicy). */
  mutate(pod: V1Pod, request: AdmissionRequest): readonly JsonPatchOp[] | MutateResult;
  /** Default `Ignore`. */
  failurePolicy?: MutatorFailurePolicy;
}

/**
 * A webhook's mutation, typed once so that one written apart from its handler needs no annotation
 * of its parameters: `const mutate: PodMutator = (pod) => injectContainerOps(pod, …)`.
 */
export type PodMutator = AdmissionOptions['mutate'];

/** Throws naming the option when `options` cannot work (a missing mutator, an unknown failure policy). */
export function checkAdmissionOptions(options: AdmissionOptions): void {
  if (typeof options?.mutate !== 'function') throw new TypeError('admission options: mutate must be a function (pod, request) => ops');
  const policy: unknown = options.failurePolicy;
  if (policy !== undefined && policy !== 'Ignore' && policy !== 'Fail') {
    throw new TypeError(`admission options: failurePolicy must be "Ignore" or "Fail", got ${JSON.stringify(policy)}`);
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Warnings answered per review, and characters per warning (the API server truncates past these anyway). */
export const WARNINGS_MAX = 12;
export const WARNING_CHARS_MAX = 256;

/** At most WARNINGS_MAX warnings of at most WARNING_CHARS_MAX characters, then one saying how many more there were. */
export function boundWarnings(warnings: readonly unknown[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < warnings.length && i < WARNINGS_MAX; i++) out.push(clipWarning(describe(warnings[i])));
  if (warnings.length > WARNINGS_MAX) out.push(`podlife: and ${warnings.length - WARNINGS_MAX} more`);
  return out;
}

function clipWarning(text: string): string {
  return text.length <= WARNING_CHARS_MAX ? text : `${text.slice(0, WARNING_CHARS_MAX - 3)}...`;
}

/** Text for a value from the wire, which may be anything (`String` throws on `{"toString": 1}`). */
function describe(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || typeof v !== 'object') return String(v);
  return Array.isArray(v) ? 'an array' : 'an object';
}

/**
 * The UTF-8 bytes of a patch are written into one buffer kept for the purpose and read back as
 * base64. `Buffer.from` takes its bytes from Node's shared 8 KiB pool and allocates a new pool
 * every few reviews, which set the encoding's tail (docs/adr/0249). The ops are written there
 * without a JSON string in between (patch-json.ts); a patch that writer leaves to JSON.stringify,
 * and that may not fit (more than a third of the buffer in UTF-16 units), gets a buffer of its own.
 */
const PATCH_BYTES = Buffer.allocUnsafeSlow(16 * 1024);

function base64Patch(ops: readonly JsonPatchOp[]): string {
  const written = writePatchJson(ops, PATCH_BYTES);
  if (written >= 0) return PATCH_BYTES.toString('base64', 0, written);
  const json = JSON.stringify(ops);
  if (json.length * 3 > PATCH_BYTES.length) return Buffer.from(json).toString('base64');
  return PATCH_BYTES.toString('base64', 0, PATCH_BYTES.write(json));
}

/** A review the mutator cannot run on: allowed unchanged with a warning, or denied under Fail. */
function unreadable(uid: string, why: string, options: AdmissionOptions): AdmissionOutcome {
  if (options.failurePolicy === 'Fail') return review({ uid, allowed: false, status: { code: 400, message: clipWarning(`podlife: ${why}`) } });
  return review({ uid, allowed: true, warnings: [clipWarning(`podlife: ${why}; left unchanged`)] });
}

function review(response: AdmissionResponse): AdmissionOutcome {
  return { httpStatus: 200, review: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response } };
}

/**
 * Answer one AdmissionReview body (see the guarantees above). Never throws for any body; throws
 * for options that cannot work, as createAdmissionHandler and admissionRoute do (checkAdmissionOptions).
 */
export function handleAdmissionReview(body: unknown, options: AdmissionOptions): AdmissionOutcome {
  checkAdmissionOptions(options);
  if (!isRecord(body)) return { httpStatus: 400, error: 'body is not a JSON object (expected an admission.k8s.io/v1 AdmissionReview)' };
  if (body.apiVersion !== 'admission.k8s.io/v1' || body.kind !== 'AdmissionReview') {
    return {
      httpStatus: 400,
      error: clipWarning(`expected apiVersion admission.k8s.io/v1 and kind AdmissionReview, got ${describe(body.apiVersion)} ${describe(body.kind)}`),
    };
  }
  const request = body.request;
  if (!isRecord(request) || typeof request.uid !== 'string' || request.uid.length === 0) {
    return { httpStatus: 400, error: 'AdmissionReview has no request.uid' };
  }
  const uid = request.uid;
  const req = request as unknown as AdmissionRequest;
  // A review that cannot be read as a pod is not a pod of another kind: under Fail it is denied.
  if (!isRecord(request.kind) || request.kind.kind === undefined) {
    return unreadable(uid, 'request.kind is missing (a pod\'s review carries kind {group: "", version: "v1", kind: "Pod"})', options);
  }
  const kind = request.kind;
  if (kind.kind !== 'Pod' || (kind.group ?? '') !== '') {
    return review({ uid, allowed: true, warnings: boundWarnings([`podlife: ${describe(kind.kind)} is not a Pod; left unchanged`]) });
  }
  if (req.operation !== undefined && req.operation !== 'CREATE' && req.operation !== 'UPDATE') return review({ uid, allowed: true });
  if (!isRecord(request.object)) return unreadable(uid, 'request.object is missing or not an object (the pod to mutate)', options);

  try {
    const out = options.mutate(request.object as V1Pod, req);
    const result: MutateResult = Array.isArray(out) ? { ops: out as readonly JsonPatchOp[] } : (out as MutateResult);
    const warnings = Array.isArray(result.warnings) && result.warnings.length > 0 ? boundWarnings(result.warnings) : undefined;
    const response: AdmissionResponse =
      result.deny !== undefined ? { uid, allowed: false, status: { code: 403, message: clipWarning(describe(result.deny)) } } : { uid, allowed: true };
    if (warnings) response.warnings = warnings;
    if (result.deny !== undefined) return review(response);
    if (result.ops && result.ops.length > 0) {
      // Inside the try: a pod nested deeper than JSON.stringify can recurse is allowed unchanged.
      response.patch = base64Patch(composed(result.ops));
      response.patchType = 'JSONPatch';
    }
    return review(response);
  } catch (err) {
    const why = err instanceof Error ? err.message : describe(err);
    if (options.failurePolicy === 'Fail') return review({ uid, allowed: false, status: { code: 500, message: clipWarning(`mutation failed: ${why}`) } });
    return review({ uid, allowed: true, warnings: boundWarnings([`podlife: pod left unchanged: ${why}`]) });
  }
}

/**
 * The controller's own mutation: label every pod with lifecycle annotations (valid or not)
 * `podlife.dev/managed: "true"`, convert sidecars to native ones (kubelet check against
 * `nodes()`), give RestartPod keystones their restart rule (declared features of `nodes()`),
 * record what it made native (`native.podlife.dev/<container>`), and surface invalid lifecycle
 * annotations, and a RestartPod that falls back, as admission warnings (kubectl shows them)
 * instead of rejecting the pod.
 */
export function lifecycleMutator(nodes: () => readonly V1Node[], options: LifecycleOptions & { stopSignals?: boolean } = {}): AdmissionOptions['mutate'] {
  // What it reads of a pod is listed in decode.ts (LIFECYCLE_FIELDS): a route decodes no more.
  return readsLifecycleFields((pod, request) => {
    const reading = readLifecycle(pod, options);
    if (reading.kind === 'not-ours') return [];
    const label = managedLabelOps(pod);
    if (reading.kind === 'invalid') {
      const warnings = reading.errors.map((e) => `podlife: ${e.message}`);
      if (reading.omitted > 0) warnings.push(`podlife: and ${reading.omitted} more problems with lifecycle annotations`);
      return { ops: label, warnings };
    }
    // Containers are immutable after creation: the API server refuses a conversion on UPDATE.
    if (request.operation === 'UPDATE') return label;
    // The annotations are read once: both plans take this reading.
    const plan = { nodes: nodes(), stopSignals: options.stopSignals };
    // The restart rules address containers by their indices before the sidecars move: first.
    const restart = reading.lifecycle.onKeystoneExit === 'RestartPod' ? restartInPlacePlanOf(pod, reading, plan) : undefined;
    const sidecars = nativeSidecarPlanOf(pod, reading, plan);
    // One list, in the order the API server applies it: rules, moves, then records and the label
    // (each container is in one of the three record groups: a keystone is never a sidecar). The
    // plans' lists are made for this call: the first one non-empty is extended in place.
    const ops: JsonPatchOp[] = restart && restart.ops.length > 0 ? restart.ops : sidecars.ops;
    if (ops !== sidecars.ops) for (const op of sidecars.ops) ops.push(op);
    if (restart) for (const k of restart.keystones) ops.push(nativeRecordOp(k, RECORD_RESTART));
    // A set, not a list scan per container: the work stays linear in the pod's containers.
    const signalled = sidecars.stopSignals ? new Set(sidecars.stopSignals) : undefined;
    for (const s of sidecars.converted) ops.push(nativeRecordOp(s, signalled?.has(s) ? RECORD_SIGNALLED_SIDECAR : RECORD_SIDECAR));
    let warnings: string[] | undefined;
    if (restart?.why !== undefined) warnings = [`podlife: ${restart.why}`];
    for (const k of sidecars.kept ?? NONE_KEPT) {
      ops.push(nativeRecordOp(k.container, RECORD_UNCONVERTED));
      (warnings ??= []).push(`podlife: sidecar ${k.container} is not made native: ${k.why}; podlife stops it itself`);
    }
    for (const op of label) ops.push(op);
    return warnings ? { ops, warnings } : { ops };
  });
}

const NONE_KEPT: NonNullable<NativeSidecarPlan['kept']> = Object.freeze([]);

/** The record values the mutator writes (`native.podlife.dev/<container>`), NativeRecords joined. */
const RECORD_RESTART = recordValue(['restart-all-containers']);
const RECORD_SIDECAR = recordValue(['sidecar']);
const RECORD_SIGNALLED_SIDECAR = recordValue(['sidecar', 'stop-signal']);
const RECORD_UNCONVERTED = recordValue(['unconverted']);

function recordValue(records: readonly NativeRecord[]): string {
  return records.join(',');
}

/** The mutation, plus the HTTP adapter's bounds and error hook. */
export interface AdmissionHandlerOptions extends AdmissionOptions {
  /** Largest accepted body; default 1 MiB. */
  maxBodyBytes?: number;
  /** Time to receive and answer a request; default 10 s (the API server's default webhook timeout). */
  timeoutMs?: number;
  /** Called with errors that were answered with 4xx/5xx, for logs and metrics. */
  onError?(err: { status: number; message: string }): void;
}

const JSON_TYPE = 'application/json';

function internalError(err: unknown): string {
  return `internal error: ${err instanceof Error ? err.message : String(err)}`;
}

/** One answer per request, within the time limit: the first `send` wins, later ones do nothing. */
class Reply {
  private done = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    private readonly onError: AdmissionHandlerOptions['onError'],
    timeoutMs: number,
    onTimeout: () => void,
  ) {
    this.timer = setTimeout(() => {
      this.send(408, `request not received and answered within ${timeoutMs} ms`);
      onTimeout();
    }, timeoutMs);
  }

  get sent(): boolean {
    return this.done;
  }

  /** A string is sent as plain text, anything else as JSON; an error status also closes the connection. */
  send(status: number, body: unknown): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    if (status >= 400) this.onError?.({ status, message: typeof body === 'string' ? body : JSON.stringify(body) });
    try {
      const text = typeof body === 'string' ? body + '\n' : JSON.stringify(body);
      this.res.writeHead(status, {
        'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : JSON_TYPE,
        'Content-Length': Buffer.byteLength(text),
        ...(status >= 400 ? { Connection: 'close' } : {}),
      });
      this.res.end(text);
    } catch {
      this.res.destroy();
    }
  }
}

/** Why a request is refused before its body is read (method, content type, declared length), if it is. */
function refusal(req: IncomingMessage, maxBody: number): { status: number; message: string } | undefined {
  if (req.method !== 'POST') return { status: 405, message: 'only POST is accepted' };
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== JSON_TYPE) return { status: 415, message: `content type must be ${JSON_TYPE}` };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBody) return { status: 413, message: `body larger than ${maxBody} bytes` };
  return undefined;
}

/** Collects the body and hands it to `received`; a body that grows past `maxBody` is refused at once. */
function readBody(req: IncomingMessage, reply: Reply, maxBody: number, received: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    if (reply.sent) return;
    size += chunk.length;
    if (size > maxBody) {
      reply.send(413, `body larger than ${maxBody} bytes`);
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on('error', () => reply.send(400, 'request stream failed'));
  req.on('end', () => {
    if (!reply.sent) received(Buffer.concat(chunks, size));
  });
}

/** Parses a received body and answers it with `handleAdmissionReview`. */
function answer(raw: Buffer, options: AdmissionOptions, reply: Reply): void {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    reply.send(400, 'body is not valid JSON');
    return;
  }
  try {
    const outcome = handleAdmissionReview(body, options);
    if (outcome.httpStatus === 200) reply.send(200, outcome.review);
    else reply.send(400, outcome.error);
  } catch (err) {
    reply.send(500, internalError(err));
  }
}

/** The node:http(s) request listener: bounds, checks, reads and answers one AdmissionReview per request. */
export function createAdmissionHandler(options: AdmissionHandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  checkAdmissionOptions(options);
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const timeoutMs = options.timeoutMs ?? 10_000;
  return (req, res) => {
    const reply = new Reply(res, options.onError, timeoutMs, () => req.destroy());
    try {
      const refused = refusal(req, maxBody);
      if (refused) {
        reply.send(refused.status, refused.message);
        req.resume();
        return;
      }
      readBody(req, reply, maxBody, (body) => answer(body, options, reply));
    } catch (err) {
      reply.send(500, internalError(err));
    }
  };
}
