#!/usr/bin/env bash
# The real-Postfix latency lab (issue 28): Debian's Postfix in a network namespace of its own,
# reached through a veth pair whose packets wait ONE_WAY_MS each way in an NFQUEUE delay line
# (nfq-delay.c; this kernel has no netem). Every address is the lab's own: the host end is
# 198.18.0.1, Postfix listens on 198.18.0.2:25 (RFC 2544 benchmarking range: it collides with nothing of this machine, whose own network is TEST-NET-1); nothing else is
# reached. Root only; Debian packages: postfix, libnetfilter-queue-dev, gcc, openssl, iptables.
#
#   bench/postfix-lab/lab.sh up [ONE_WAY_MS]   # default 20: a 40 ms round trip
#   bench/postfix-lab/lab.sh down
#
# Postfix answers for lab.test: root@lab.test exists (RCPT 250), any other local part is
# refused (550 5.1.1); STARTTLS with a self-signed certificate, TLS 1.3.
set -euo pipefail
NS=mvlab
HOST_IF=mvlab0
NS_IF=mvlab1
QUEUE=7
DIR=/var/tmp/mailverdict-postfix-lab
HERE="$(cd "$(dirname "$0")" && pwd)"

down() {
  [ -f "$DIR/nfq.pid" ] && kill "$(cat "$DIR/nfq.pid")" 2>/dev/null || true
  rm -f "$DIR/nfq.pid"
  iptables -D OUTPUT -o "$HOST_IF" -j NFQUEUE --queue-num "$QUEUE" 2>/dev/null || true
  iptables -D INPUT -i "$HOST_IF" -j NFQUEUE --queue-num "$QUEUE" 2>/dev/null || true
  ip netns exec "$NS" postfix stop >/dev/null 2>&1 || true
  ip link del "$HOST_IF" 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
}

up() {
  local one_way="${1:-20}"
  down
  # Never take an address this machine already uses (its own network may be anywhere).
  if ip -o addr | grep -q ' 198\.18\.0\.'; then
    echo "lab: 198.18.0.0/30 is in use on this machine; not starting" >&2
    return 1
  fi
  mkdir -p "$DIR" "/etc/netns/$NS"
  if ! command -v postfix >/dev/null || ! command -v iptables >/dev/null ||
    [ ! -f /usr/include/libnetfilter_queue/libnetfilter_queue.h ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postfix libnetfilter-queue-dev gcc openssl iptables >/dev/null
  fi
  cc -O2 -o "$DIR/nfq-delay" "$HERE/nfq-delay.c" -lnetfilter_queue
  if [ ! -f "$DIR/cert.pem" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=mx.lab.test" \
      -keyout "$DIR/key.pem" -out "$DIR/cert.pem" 2>/dev/null
  fi
  # The namespace: no resolver (Postfix's client lookups fail at once on its own loopback), the
  # prober's name from a hosts file.
  echo "nameserver 127.0.0.1" >"/etc/netns/$NS/resolv.conf"
  printf '127.0.0.1 localhost\n198.18.0.1 prober.lab.test\n198.18.0.2 mx.lab.test\n' >"/etc/netns/$NS/hosts"
  ip netns add "$NS"
  ip link add "$HOST_IF" type veth peer name "$NS_IF"
  ip link set "$NS_IF" netns "$NS"
  ip addr add 198.18.0.1/30 dev "$HOST_IF"
  ip link set "$HOST_IF" up
  ip netns exec "$NS" ip addr add 198.18.0.2/30 dev "$NS_IF"
  ip netns exec "$NS" ip link set "$NS_IF" up
  ip netns exec "$NS" ip link set lo up
  # Postfix as Debian installs it, listening in the namespace only, unchrooted (the hosts file).
  postconf -e "inet_interfaces = 198.18.0.2" "inet_protocols = ipv4" "myhostname = mx.lab.test" \
    "mydestination = lab.test, mx.lab.test" "mynetworks = 127.0.0.0/8" \
    "smtpd_tls_cert_file = $DIR/cert.pem" "smtpd_tls_key_file = $DIR/key.pem" \
    "smtpd_tls_security_level = may" "smtp_dns_support_level = disabled" \
    "smtpd_client_connection_rate_limit = 0" "smtpd_client_restrictions =" \
    "smtpd_helo_restrictions =" "smtpd_sender_restrictions ="
  postconf -F "smtp/inet/chroot = n"
  ip netns exec "$NS" postfix start >/dev/null 2>&1 || ip netns exec "$NS" postfix reload >/dev/null
  # The delay line, both directions of the host's end.
  "$DIR/nfq-delay" "$QUEUE" "$one_way" 2>"$DIR/nfq.log" &
  echo $! >"$DIR/nfq.pid"
  iptables -I OUTPUT -o "$HOST_IF" -j NFQUEUE --queue-num "$QUEUE"
  iptables -I INPUT -i "$HOST_IF" -j NFQUEUE --queue-num "$QUEUE"
  # The lab's address must now be reached through its own veth, never another route.
  ip route get 198.18.0.2 | grep -q "dev $HOST_IF" || { echo "lab: 198.18.0.2 is not routed to $HOST_IF" >&2; down; return 1; }
  for _ in $(seq 1 50); do
    (exec 3<>/dev/tcp/198.18.0.2/25) 2>/dev/null && { echo "lab up: Postfix at 198.18.0.2:25, ${one_way} ms each way"; return 0; }
    sleep 0.2
  done
  echo "lab: Postfix did not answer on 198.18.0.2:25" >&2
  return 1
}

case "${1:-}" in
  up) up "${2:-20}" ;;
  down) down ;;
  *) echo "usage: $0 up [ONE_WAY_MS] | down" >&2; exit 2 ;;
esac
