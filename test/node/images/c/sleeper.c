/*
 * A distroless test workload: one static binary, no shell, no signal handler.
 * As PID 1 of its PID namespace the kernel drops every signal it has no handler for when it is
 * sent from inside that namespace (pid_namespaces(7)), so neither `kill -s TERM 1` nor
 * `kill -s KILL 1` from an exec or an ephemeral container ends it; only the runtime can.
 */
#include <unistd.h>

int main(void) {
  for (;;) pause();
}
