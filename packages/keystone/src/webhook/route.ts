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

/** The route answering AdmissionReviews with `options.mutate`. */
export function admissionRoute(options: AdmissionOptions): WebhookHandler {
  checkAdmissionOptions(options);
  const decode = readsOnlyLifecycleFields(options.mutate) ? decodeLifecycleReview : decodeWhole;
  return (body) => {
    let review: unknown;
    try {
      review = decode(body);
    } catch (err) {
      return { status: 400, body: { error: `body is not JSON: ${(err as Error).message}` } };
    }
    const outcome = handleAdmissionReview(review, options);
    return outcome.httpStatus === 200 ? { status: 200, body: outcome.review } : { status: 400, body: { error: outcome.error } };
  };
}

function decodeWhole(body: Buffer): unknown {
  return JSON.parse(body.toString('utf8'));
}
