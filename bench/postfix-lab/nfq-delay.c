/*
 * A delay line for the real-Postfix latency lab (bench/postfix-lab/lab.sh): every packet that
 * iptables sends to NFQUEUE queue N is accepted DELAY_MS later, in arrival order. This kernel
 * has no netem; NFQUEUE with a fixed delay per direction gives a round trip of 2 x DELAY_MS
 * without touching TCP itself (ACKs, Nagle and delayed ACKs behave as on a real path).
 *
 * The delay must be exact, or every round trip of a measurement grows: the wait is a nanosecond
 * ppoll (a millisecond poll rounded up added 0.5 ms a packet on average), with no timer slack, at
 * a real-time priority (on a busy machine a normal one woke milliseconds late): 41.2-41.6 ms p50
 * for a 40 ms TCP connect before, see docs/benchmarks.md.
 *
 * Build: cc -O2 -o nfq-delay nfq-delay.c -lnetfilter_queue   (Debian: libnetfilter-queue-dev)
 * Run:   nfq-delay QUEUE DELAY_MS
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RING 65536

static uint32_t ids[RING];
static int64_t due[RING];
static unsigned head, tail;
static int64_t delay_ns;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa, void *data) {
  (void)msg;
  (void)data;
  struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
  if (ph == NULL) return 0;
  uint32_t id = ntohl(ph->packet_id);
  if (tail - head >= RING) return nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL); /* full: no delay */
  ids[tail % RING] = id;
  due[tail % RING] = now_ns() + delay_ns;
  tail++;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: nfq-delay QUEUE DELAY_MS\n");
    return 2;
  }
  int queue = atoi(argv[1]);
  delay_ns = (int64_t)atoi(argv[2]) * 1000000;
  struct nfq_handle *h = nfq_open();
  if (h == NULL) return perror("nfq_open"), 1;
  struct nfq_q_handle *qh = nfq_create_queue(h, (uint16_t)queue, &on_packet, NULL);
  if (qh == NULL) return perror("nfq_create_queue"), 1;
  /* Only the headers are needed: the verdict carries no payload. */
  if (nfq_set_mode(qh, NFQNL_COPY_PACKET, 64) < 0) return perror("nfq_set_mode"), 1;
  nfq_set_queue_maxlen(qh, RING);
  int fd = nfq_fd(h);
  char buf[4096] __attribute__((aligned));
  /* Best effort: without them the line still works, only less exactly on a busy machine. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  struct sched_param sp = {.sched_priority = 50};
  if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) perror("nfq-delay: SCHED_FIFO (continuing)");
  mlockall(MCL_CURRENT | MCL_FUTURE);
  fprintf(stderr, "nfq-delay: queue %d, %s ms each way\n", queue, argv[2]);
  for (;;) {
    struct timespec timeout;
    struct timespec *until = NULL;
    if (head != tail) {
      int64_t wait = due[head % RING] - now_ns();
      if (wait < 0) wait = 0;
      timeout.tv_sec = (time_t)(wait / 1000000000);
      timeout.tv_nsec = (long)(wait % 1000000000);
      until = &timeout;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int ready = ppoll(&p, 1, until, NULL);
    if (ready < 0 && errno != EINTR) return perror("poll"), 1;
    if (ready > 0) {
      int n = recv(fd, buf, sizeof buf, 0);
      if (n >= 0) nfq_handle_packet(h, buf, n);
    }
    int64_t t = now_ns();
    while (head != tail && due[head % RING] <= t) {
      nfq_set_verdict(qh, ids[head % RING], NF_ACCEPT, 0, NULL);
      head++;
    }
  }
}
