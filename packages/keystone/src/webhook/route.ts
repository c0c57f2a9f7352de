/**
 * An admission route for a webhook server that hands routes the raw body (the controller's
 * `WebhookServer`, or any server of your own).
 *
 * Guarantees: a body that is not JSON is answered 400 naming the parse error; what
 * `handleAdmissionReview` answers otherwise is returned as is (400 with its reason, or 200 with
 * the review); the handler never throws. Options are checked when the route is made. A route
 * whose mutation is keystone's lifecycle mutation (`lifecycleMutator`, alone or `withPolicies`)
 * decodes only the members of the review that mutation reads (decode.ts): the same answers, with
 * a fraction of the objects made per review; any other mutation gets the whole review.
 */
import { checkAdmissionOptions, handleAdmissionReview, type AdmissionOptions } from './admission.js';
import { decodeLifecycleReview, readsOnlyLifecycleFields } from './decode.js';

/** What a route answers: an HTTP status and a JSON body. */
export interface WebhookAnswer {
  status: number;
  body: unknown;
}

/** A route handler gets the raw body (already size-checked by the server) and answers JSON. */
export type WebhookHandler = (body: Buffer, signal: AbortSignal) => WebhookAnswer | Promise<WebhookAnswer>;

/**
 * A route that answers the body parsed as JSON (by `decode`, default `JSON.parse` of its UTF-8):
 * a body that is not JSON is answered 400 naming the parse error, and `answer` never sees it.
 */
export function jsonRoute(answer: (body: unknown) => WebhookAnswer, decode: (body: Buffer) => unknown = decodeWhole): WebhookHandler {
  return (body) => {
    let parsed: unknown;
    try {
      parsed = decode(body);
    } catch (err) {
      return { status: 400, body: { error: `body is not JSON: ${(err as Error).message}` } };
    }
    return answer(parsed);
  };
}

/** The route answering AdmissionReviews with `options.mutate`. */
export function admissionRoute(options: AdmissionOptions): WebhookHandler {
  checkAdmissionOptions(options);
  const decode = readsOnlyLifecycleFields(options.mutate) ? decodeLifecycleReview : decodeWhole;
  return jsonRoute((review) => {
    const outcome = handleAdmissionReview(review, options);
    return outcome.httpStatus === 200 ? { status: 200, body: outcome.review } : { status: 400, body: { error: outcome.error } };
  }, decode);
}

function decodeWhole(body: Buffer): unknown {
  return JSON.parse(body.toString('utf8'));
}
