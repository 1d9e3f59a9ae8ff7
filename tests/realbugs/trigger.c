// SPDX-License-Identifier: GPL-2.0
/*
 * trigger - drive the userspace side of the real-bug cases (tests/realbugs).
 *
 *   trigger <case-name> <N>    run the case's sequence N times
 *   trigger --list             print the case names
 *
 * Each case walks, N times, the kernel path that one of the patches in this
 * directory makes leak a reference, and cleans up everything userspace can
 * clean up: on a kernel without the patch nothing it allocated stays
 * allocated once it has exited (some frees are deferred to RCU or a
 * workqueue, hence the short settle sleep at the end).
 *
 * Each iteration also walks the same calls without the condition that
 * leaks (the normal path next to the error path), as any real workload
 * does: those objects reach zero on either kernel, and they are what
 * 'perf refleak report' learns the balanced shape of an object from.
 *
 * With REALBUGS_DONE=<file> in the environment, the file is created once the
 * iterations are done; with REALBUGS_STAY=<s>, the trigger stays alive that
 * long after them, so that the leaked objects belong to a process still
 * running when a recording ends (guest/realbugs.sh, cases that "stay").
 *
 * Exit status: 0 done, 1 a syscall failed unexpectedly (or bad usage),
 * 2 the kernel lacks the feature (the reason is printed).
 *
 * Build: gcc -static -O2 -Wall -Wextra -o trigger trigger.c -lpthread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/can.h>
#include <linux/can/bcm.h>
#include <linux/can/j1939.h>
#include <linux/errqueue.h>
#include <linux/filter.h>
#include <linux/genetlink.h>
#include <linux/loop.h>
#include <linux/mptcp.h>
#include <linux/net_tstamp.h>
#include <linux/netlink.h>
#include <linux/nfc.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef IN_MASK_CREATE
#define IN_MASK_CREATE 0x10000000
#endif
#ifndef MSG_OOB
#define MSG_OOB 1
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef SO_TIMESTAMPING
#define SO_TIMESTAMPING 37
#endif

/* <linux/keyctl.h>, which libc does not wrap */
#define KEYCTL_JOIN_SESSION_KEYRING	1
#define KEYCTL_SETPERM			5
#define KEY_POS_ALL	0x3f000000
#define KEY_USR_VIEW	0x00010000
#define KEY_USR_READ	0x00020000
#define KEY_USR_SEARCH	0x00080000
#define KEY_USR_LINK	0x00100000

#define PING_RANGE	"/proc/sys/net/ipv4/ping_group_range"
#define PING_GID	4242	/* a supplementary group in a 1-gid range */

#define NH_NET		0x0a400000u	/* 10.64.0.0/10: the routes' /32s */

#ifndef PR_TIMER_CREATE_RESTORE_IDS
#define PR_TIMER_CREATE_RESTORE_IDS	77
#define PR_TIMER_CREATE_RESTORE_IDS_OFF	0
#define PR_TIMER_CREATE_RESTORE_IDS_ON	1
#endif

static const char *case_name = "trigger";

static void __attribute__((noreturn, format(printf, 2, 3)))
quit(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "trigger: %s: ", case_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/* a syscall failed unexpectedly: exit 1 with its errno */
#define fail(what) quit(1, "%s: %s", what, strerror(errno))
/* the kernel lacks what the case needs: exit 2 */
#define unsupported(what) quit(2, "%s: %s (kernel lacks the feature)", \
			       what, strerror(errno))

static int missing_feature(int err)
{
	return err == ENOSYS || err == EOPNOTSUPP || err == EAFNOSUPPORT ||
	       err == EPROTONOSUPPORT || err == ESOCKTNOSUPPORT;
}

/* Let RCU callbacks and workqueues run the deferred frees. */
/* REALBUGS_DONE, REALBUGS_STAY: see the top of this file */
static void stay(void)
{
	const char *done = getenv("REALBUGS_DONE"), *secs = getenv("REALBUGS_STAY");
	int fd;

	if (done) {
		fd = open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			fail(done);
		close(fd);
	}
	if (secs && atoi(secs) > 0)
		sleep(atoi(secs));
}

static void settle(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 300 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* Run fn(i) in a child; it exits 0, 1 or 2 and prints its own error. */
static pid_t start_child(void (*fn)(int), int i)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		fn(i);
		_exit(0);
	}
	return pid;
}

/* Wait for a child of start_child(); its failure is passed on. */
static void wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		fail("waitpid");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (WIFEXITED(status))
		exit(WEXITSTATUS(status) == 2 ? 2 : 1);
	quit(1, "child %d killed by signal %d", (int)pid, WTERMSIG(status));
}

static void in_child(void (*fn)(int), int i)
{
	wait_child(start_child(fn, i));
}

/*
 * keys-join-session: join (create) a named session keyring, let the user
 * search it, and join it again while it is already the session keyring.
 * The second join finds it (taking a reference) and returns 0 from the
 * "keyring == new->session_keyring" branch, which must drop that
 * reference.  The child then exits, releasing its session keyring.  The
 * normal path: a child joins a new keyring once and exits.
 */
static void keys_join_new(int i, char *name, size_t size)
{
	struct timespec now;
	long serial;

	/* unique even if a leaked keyring of an earlier run has our pid */
	clock_gettime(CLOCK_MONOTONIC, &now);
	snprintf(name, size, "refleak-%d-%lld.%09ld-%d", (int)getppid(),
		 (long long)now.tv_sec, now.tv_nsec, i);
	serial = syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name);
	if (serial < 0) {
		if (missing_feature(errno))
			unsupported("keyctl(KEYCTL_JOIN_SESSION_KEYRING)");
		fail("keyctl(KEYCTL_JOIN_SESSION_KEYRING) to create");
	}
	if (syscall(SYS_keyctl, KEYCTL_SETPERM, serial,
		    KEY_POS_ALL | KEY_USR_VIEW | KEY_USR_READ |
		    KEY_USR_SEARCH | KEY_USR_LINK) < 0)
		fail("keyctl(KEYCTL_SETPERM)");
}

/* the normal path: join a new keyring once, exit */
static void keys_child_once(int i)
{
	char name[80];

	keys_join_new(i, name, sizeof(name));
}

static void keys_child(int i)
{
	char name[80];
	long ret;

	keys_join_new(i, name, sizeof(name));
	ret = syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name);
	if (ret < 0)
		fail("keyctl(KEYCTL_JOIN_SESSION_KEYRING) to rejoin");
	if (ret != 0)
		quit(1, "rejoining %s returned %ld, not 0: the already-joined "
		     "branch was not taken", name, ret);
}

static void case_keys(int n)
{
	for (int i = 0; i < n; i++) {
		in_child(keys_child_once, i);
		in_child(keys_child, i);
	}
}

/*
 * inotify-mask-create: watch a fresh file, then ask for a watch on it again
 * with IN_MASK_CREATE.  The lookup of the existing mark takes a reference
 * that the -EEXIST return must drop.  Then remove the watch, close the
 * instance and unlink the file.  The normal path: the same without the
 * IN_MASK_CREATE watch.
 */
/* a watch with IN_MASK_CREATE on a watched file: EEXIST */
static void inotify_mask_create_fails(int fd, const char *path)
{
	if (inotify_add_watch(fd, path, IN_MODIFY | IN_MASK_CREATE) >= 0)
		quit(1, "inotify_add_watch(IN_MASK_CREATE) on a watched "
		     "file succeeded, expected EEXIST");
	if (errno == EINVAL)
		unsupported("inotify_add_watch(IN_MASK_CREATE)");
	if (errno != EEXIST)
		fail("inotify_add_watch(IN_MASK_CREATE)");
}

static void case_inotify(int n)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];

	if (!dir || !*dir)
		dir = "/tmp";
	for (int i = 0; i < 2 * n; i++) {
		bool mask_create = i % 2;	/* the normal path first */
		int fd, wd, file;

		fd = inotify_init1(IN_CLOEXEC);
		if (fd < 0) {
			if (missing_feature(errno))
				unsupported("inotify_init1");
			fail("inotify_init1");
		}
		snprintf(path, sizeof(path), "%s/refleak-inotify-%d-%d",
			 dir, (int)getpid(), i);
		file = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
		if (file < 0)
			fail(path);
		close(file);
		wd = inotify_add_watch(fd, path, IN_MODIFY);
		if (wd < 0)
			fail("inotify_add_watch");
		if (mask_create)
			inotify_mask_create_fails(fd, path);
		if (inotify_rm_watch(fd, wd) < 0)
			fail("inotify_rm_watch");
		if (close(fd) < 0)
			fail("close(inotify)");
		if (unlink(path) < 0)
			fail(path);
	}
}

/*
 * unix-oob-pid: a child sends one byte and one MSG_OOB byte on an AF_UNIX
 * stream socket whose peer has SO_PASSCRED, so each skb gets a reference
 * on the child's struct pid, which the skb's destructor must drop.  The
 * parent reads both bytes, reaps the child and closes both ends.  The
 * normal path: a child that sends the byte alone.
 */
static int oob_sv[2];

static void unix_child_send(void)
{
	if (send(oob_sv[0], "a", 1, 0) != 1)
		fail("send");
}

static void unix_child_normal(int i)
{
	(void)i;
	unix_child_send();
}

static void unix_child(int i)
{
	(void)i;
	unix_child_send();
	if (send(oob_sv[0], "!", 1, MSG_OOB) != 1) {
		if (errno == EOPNOTSUPP)
			unsupported("send(MSG_OOB) on AF_UNIX");
		fail("send(MSG_OOB)");
	}
}

static void case_unix(int n)
{
	int one = 1;
	char c;

	for (int i = 0; i < 2 * n; i++) {
		bool oob = i % 2;	/* the normal path first */

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, oob_sv) < 0) {
			if (missing_feature(errno))
				unsupported("socketpair(AF_UNIX)");
			fail("socketpair(AF_UNIX)");
		}
		if (setsockopt(oob_sv[1], SOL_SOCKET, SO_PASSCRED, &one,
			       sizeof(one)) < 0)
			fail("setsockopt(SO_PASSCRED)");
		in_child(oob ? unix_child : unix_child_normal, i);
		if (oob && recv(oob_sv[1], &c, 1, MSG_OOB | MSG_DONTWAIT) != 1)
			fail("recv(MSG_OOB)");
		if (oob && c != '!')
			quit(1, "recv(MSG_OOB) read %#x, expected '!'", c);
		if (recv(oob_sv[1], &c, 1, MSG_DONTWAIT) != 1)
			fail("recv");
		if (c != 'a')
			quit(1, "recv read %#x, expected 'a'", c);
		if (close(oob_sv[0]) < 0 || close(oob_sv[1]) < 0)
			fail("close(socket)");
	}
}

/*
 * ping-group-info: with net.ipv4.ping_group_range set to one gid that is
 * not our egid, a child whose only supplementary group is that gid opens
 * an ICMP datagram socket: ping_init_sock() takes a reference on the
 * child's group_info, finds the gid in it and must drop the reference.
 * The child then exits, releasing its credentials (and group_info).
 * The normal path: a child whose group is outside the range is denied
 * (ping_init_sock() puts the reference on that return).  The original
 * range is restored at the end.
 */
/* the normal path: a supplementary group outside the range, EACCES */
static void ping_child_denied(int i)
{
	gid_t gid = PING_GID + 1;

	(void)i;
	if (syscall(SYS_setgroups, 1, &gid) < 0)
		fail("setgroups");
	if (socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP) >= 0)
		quit(1, "an ICMP socket with gid %d outside the range", PING_GID + 1);
	if (missing_feature(errno))
		unsupported("socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)");
	if (errno != EACCES)
		fail("socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP), expected EACCES");
}

static void ping_child(int i)
{
	gid_t gid = PING_GID;
	int s;

	(void)i;
	if (syscall(SYS_setgroups, 1, &gid) < 0)
		fail("setgroups");
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (s < 0) {
		if (missing_feature(errno))
			unsupported("socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)");
		fail("socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)");
	}
	if (close(s) < 0)
		fail("close(ping socket)");
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t)len) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return close(fd);
}

static void case_ping(int n)
{
	char old[64], range[64];
	ssize_t len;
	int fd;

	if (getegid() == PING_GID)
		quit(1, "run with an egid other than %d", PING_GID);
	fd = open(PING_RANGE, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			unsupported(PING_RANGE " (needs CONFIG_INET and "
				    "CONFIG_PROC_SYSCTL)");
		fail(PING_RANGE);
	}
	len = read(fd, old, sizeof(old) - 1);
	if (len <= 0)
		fail("read " PING_RANGE);
	close(fd);
	old[len] = '\0';
	snprintf(range, sizeof(range), "%d %d\n", PING_GID, PING_GID);
	if (write_file(PING_RANGE, range) < 0)
		fail("write " PING_RANGE);
	for (int i = 0; i < n; i++) {
		in_child(ping_child_denied, i);
		in_child(ping_child, i);
	}
	if (write_file(PING_RANGE, old) < 0)
		fail("restore " PING_RANGE);
}

/*
 * nexthop-blackhole: in init_net (nothing dismantles its routing table),
 * create a blackhole nexthop object and a blackhole /32 route that uses it
 * (RTA_NH_ID), then delete the nexthop.  The route holds a reference on the
 * nexthop (fib_create_info()); deleting the nexthop marks the route dead,
 * and flushing it must drop that reference, also for an error route.  The
 * normal path: the same with a unicast route, which is flushed on either
 * kernel.  Everything is allocated by this process (rtnetlink requests run
 * in the sender's context); guest/realbugs.sh keeps it alive to the end of
 * the recording (REALBUGS_STAY), so the leaked nexthops are still objects
 * of a running process, older than the ones that died.
 */
struct nl_req {
	struct nlmsghdr nh;
	union {
		struct nhmsg nhm;
		struct rtmsg rtm;
		struct ifinfomsg ifi;
	};
	char attrs[64];
};

static int nl_fd = -1;
static unsigned int nl_seq;

static void nl_attr(struct nl_req *req, unsigned short type,
		    const void *data, unsigned short len)
{
	struct rtattr *rta = (struct rtattr *)((char *)req +
					       NLMSG_ALIGN(req->nh.nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	req->nh.nlmsg_len = NLMSG_ALIGN(req->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/*
 * Send one request on nl_fd and return the (negative) errno of its ack;
 * with reply, the first other message answering it is copied there.
 */
static int nl_talk_reply(struct nlmsghdr *nh, void *reply, size_t size)
{
	char buf[4096] __attribute__((aligned(8)));
	struct nlmsghdr *ack = (struct nlmsghdr *)buf;
	ssize_t len;

	nh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	nh->nlmsg_seq = ++nl_seq;
	if (send(nl_fd, nh, nh->nlmsg_len, 0) != (ssize_t)nh->nlmsg_len)
		fail("send(AF_NETLINK)");
	for (;;) {
		len = recv(nl_fd, buf, sizeof(buf), 0);
		if (len < 0)
			fail("recv(AF_NETLINK)");
		if (!NLMSG_OK(ack, (size_t)len) || ack->nlmsg_seq != nl_seq)
			continue;
		if (ack->nlmsg_type == NLMSG_ERROR)
			return ((struct nlmsgerr *)NLMSG_DATA(ack))->error;
		if (!reply)
			quit(1, "netlink: unexpected reply type %d", ack->nlmsg_type);
		memcpy(reply, buf, (size_t)len < size ? (size_t)len : size);
		reply = NULL;	/* the ack follows */
	}
}

static int nl_talk(struct nl_req *req)
{
	return nl_talk_reply(&req->nh, NULL, 0);
}

/* a netlink socket for protocol proto, in nl_fd */
static void nl_open(int proto, const char *what)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (nl_fd < 0) {
		if (missing_feature(errno))
			unsupported(what);
		fail(what);
	}
	if (bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		fail("bind(AF_NETLINK)");
}

static void nh_request(int type, int flags, unsigned int id)
{
	struct nl_req req;
	int err;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.nhm));
	req.nh.nlmsg_type = type;
	req.nh.nlmsg_flags = flags;
	req.nhm.nh_family = AF_INET;
	nl_attr(&req, NHA_ID, &id, sizeof(id));
	if (type == RTM_NEWNEXTHOP)
		nl_attr(&req, NHA_BLACKHOLE, NULL, 0);
	err = nl_talk(&req);
	if (err == -EOPNOTSUPP || err == -EAFNOSUPPORT) {
		errno = -err;
		unsupported("RTM_NEWNEXTHOP");
	}
	if (err == -EEXIST)
		quit(1, "nexthop id %u exists: left by an earlier run (reboot)", id);
	if (err) {
		errno = -err;
		fail(type == RTM_NEWNEXTHOP ? "RTM_NEWNEXTHOP" : "RTM_DELNEXTHOP");
	}
}

static void nh_route_add(unsigned int addr, unsigned int id, bool blackhole)
{
	unsigned int dst = htonl(addr);
	struct nl_req req;
	int err;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.rtm));
	req.nh.nlmsg_type = RTM_NEWROUTE;
	req.nh.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	req.rtm.rtm_family = AF_INET;
	req.rtm.rtm_dst_len = 32;
	req.rtm.rtm_table = RT_TABLE_MAIN;
	req.rtm.rtm_protocol = RTPROT_STATIC;
	req.rtm.rtm_scope = RT_SCOPE_UNIVERSE;
	req.rtm.rtm_type = blackhole ? RTN_BLACKHOLE : RTN_UNICAST;
	nl_attr(&req, RTA_DST, &dst, sizeof(dst));
	nl_attr(&req, RTA_NH_ID, &id, sizeof(id));
	err = nl_talk(&req);
	if (err == -EEXIST)
		quit(1, "route %u.%u.%u.%u/32 exists: left by an earlier run "
		     "(reboot)", addr >> 24, (addr >> 16) & 255,
		     (addr >> 8) & 255, addr & 255);
	if (err) {
		errno = -err;
		fail("RTM_NEWROUTE with RTA_NH_ID");
	}
}

static void case_nexthop(int n)
{
	/* ids unique per run: a leaked nexthop is deleted, its id free */
	unsigned int base = 1 + ((unsigned int)getpid() % 4096) * 0x80000u;

	nl_open(NETLINK_ROUTE, "socket(AF_NETLINK, NETLINK_ROUTE)");
	for (int i = 0; i < 2 * n; i++) {
		bool blackhole = i % 2;	/* the normal path first */
		unsigned int id = base + i;

		nh_request(RTM_NEWNEXTHOP, NLM_F_CREATE | NLM_F_EXCL, id);
		nh_route_add(NH_NET + i, id, blackhole);
		/* flushes the routes using it; the fixed kernel both kinds */
		nh_request(RTM_DELNEXTHOP, 0, id);
	}
	close(nl_fd);
}

/*
 * tcp-filter-reqsk: a listener with a socket filter (SO_ATTACH_FILTER, a
 * classic BPF program) that passes SYNs only.  A client connects: the SYN
 * makes a request socket (on the receive path, in softirq) and the SYN-ACK
 * completes the client's connect(); the handshake's ACK, and the RST of the
 * client's close (SO_LINGER 0), find the request socket, taking a
 * reference each, and are dropped by the filter, which must drop those
 * references.  Then the listener is closed: the request's timer (1 s)
 * unhashes it and puts the hash and timer references.  The normal path:
 * a listener whose filter passes everything, a connection accepted and
 * reset.  The trigger waits 1.5 s at the end for the last requests' timers.
 */
static struct sock_filter tcp_syn_only[] = {
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 13),		/* the TCP flags */
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x02, 0, 1),	/* SYN */
	BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
	BPF_STMT(BPF_RET | BPF_K, 0),
};

static struct sock_filter tcp_pass_all[] = {
	BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
};

/* a listener on 127.0.0.1 with the filter; its address in *addr */
static int tcp_filtered_listener(bool syn_only, struct sockaddr_in *addr)
{
	struct sock_fprog prog = {
		.len = syn_only ? sizeof(tcp_syn_only) / sizeof(tcp_syn_only[0]) :
				  sizeof(tcp_pass_all) / sizeof(tcp_pass_all[0]),
		.filter = syn_only ? tcp_syn_only : tcp_pass_all,
	};
	socklen_t len = sizeof(*addr);
	int fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		if (missing_feature(errno))
			unsupported("socket(AF_INET, SOCK_STREAM)");
		fail("socket(AF_INET, SOCK_STREAM)");
	}
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) < 0)
		fail("bind(127.0.0.1) (is lo up?)");
	if (listen(fd, 8) < 0)
		fail("listen");
	if (getsockname(fd, (struct sockaddr *)addr, &len) < 0)
		fail("getsockname");
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0) {
		if (errno == ENOPROTOOPT || missing_feature(errno))
			unsupported("setsockopt(SO_ATTACH_FILTER)");
		fail("setsockopt(SO_ATTACH_FILTER)");
	}
	return fd;
}

static int tcp_connect(const struct sockaddr_in *addr)
{
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		fail("socket(AF_INET, SOCK_STREAM)");
	/* a connect() the SYN-ACK never completes fails instead of hanging */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		fail("setsockopt(SO_SNDTIMEO)");
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0)
		fail("connect(127.0.0.1)");
	return fd;
}

/* close with a RST (SO_LINGER 0): no TIME_WAIT socket stays behind */
static void tcp_reset(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) < 0)
		fail("setsockopt(SO_LINGER)");
	if (close(fd) < 0)
		fail("close(client)");
}

static void case_tcp_filter(int n)
{
	struct timespec ts = { .tv_sec = 1, .tv_nsec = 500 * 1000 * 1000 };
	struct sockaddr_in addr;

	for (int i = 0; i < 2 * n; i++) {
		bool syn_only = i % 2;	/* the normal path first */
		int lfd, cfd, afd;

		lfd = tcp_filtered_listener(syn_only, &addr);
		cfd = tcp_connect(&addr);
		if (syn_only) {
			/* the ACK was dropped: no child in the accept queue */
			if (fcntl(lfd, F_SETFL, O_NONBLOCK) < 0)
				fail("fcntl(O_NONBLOCK)");
			afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (afd >= 0)
				quit(1, "accepted a connection whose ACK the filter "
				     "should have dropped");
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				fail("accept4");
			tcp_reset(cfd);
		} else {
			afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (afd < 0)
				fail("accept4");
			tcp_reset(cfd);
			if (close(afd) < 0)
				fail("close(accepted)");
		}
		if (close(lfd) < 0)
			fail("close(listener)");
	}
	/* the request timers of the last listeners (TCP_TIMEOUT_INIT, 1 s) */
	nanosleep(&ts, NULL);
}

/*
 * udp-zerocopy-tstamp: a UDP socket with SO_ZEROCOPY and SO_TIMESTAMPING
 * (SOF_TIMESTAMPING_TX_SOFTWARE) sends one datagram with MSG_ZEROCOPY to
 * a receiver on 127.0.0.1.  The zerocopy skb's struct ubuf_info holds a
 * reference on the socket; loopback_xmit() puts a clone of the skb, with
 * the TX timestamp, in the sender's error queue, and the clone must not
 * keep the ubuf.  The receiver reads the datagram, and the sender is closed
 * without reading its error queue.  The normal path: the sender reads its
 * error queue (the timestamp, then the zerocopy completion) before close.
 */
static char udp_payload[64] = "perf refleak udp-zerocopy-tstamp";

/* read the error queue empty: the timestamp and the zerocopy completion */
static void udp_drain_errqueue(int fd)
{
	int tstamps = 0, completions = 0;
	char data[sizeof(udp_payload)], control[512];

	for (;;) {
		struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = control, .msg_controllen = sizeof(control),
		};
		struct cmsghdr *cm;

		if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			fail("recvmsg(MSG_ERRQUEUE)");
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct sock_extended_err *ee;

			if (cm->cmsg_level != SOL_IP || cm->cmsg_type != IP_RECVERR)
				continue;
			ee = (struct sock_extended_err *)CMSG_DATA(cm);
			if (ee->ee_origin == SO_EE_ORIGIN_TIMESTAMPING)
				tstamps++;
			else if (ee->ee_origin == SO_EE_ORIGIN_ZEROCOPY)
				completions++;
		}
	}
	if (!tstamps || !completions)
		quit(1, "error queue held %d timestamps and %d zerocopy "
		     "completions, expected one of each", tstamps, completions);
}

static void case_udp_zerocopy(int n)
{
	struct timeval tv = { .tv_sec = 5 };
	struct sockaddr_in addr;
	socklen_t len = sizeof(addr);
	int rx, one = 1, tsflags = SOF_TIMESTAMPING_TX_SOFTWARE;
	char data[sizeof(udp_payload)];

	rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx < 0) {
		if (missing_feature(errno))
			unsupported("socket(AF_INET, SOCK_DGRAM)");
		fail("socket(AF_INET, SOCK_DGRAM)");
	}
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(rx, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		fail("bind(127.0.0.1) (is lo up?)");
	if (getsockname(rx, (struct sockaddr *)&addr, &len) < 0)
		fail("getsockname");
	if (setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		fail("setsockopt(SO_RCVTIMEO)");
	for (int i = 0; i < 2 * n; i++) {
		bool drain = !(i % 2);	/* the normal path first */
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			fail("socket(AF_INET, SOCK_DGRAM)");
		if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &tsflags,
			       sizeof(tsflags)) < 0) {
			if (errno == ENOPROTOOPT || missing_feature(errno))
				unsupported("setsockopt(SO_TIMESTAMPING)");
			fail("setsockopt(SO_TIMESTAMPING)");
		}
		if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) < 0) {
			if (errno == ENOPROTOOPT || missing_feature(errno))
				unsupported("setsockopt(SO_ZEROCOPY)");
			fail("setsockopt(SO_ZEROCOPY)");
		}
		if (sendto(fd, udp_payload, sizeof(udp_payload), MSG_ZEROCOPY,
			   (struct sockaddr *)&addr, sizeof(addr)) !=
		    (ssize_t)sizeof(udp_payload))
			fail("sendto(MSG_ZEROCOPY)");
		/* delivered: the timestamp clone is queued before the receive */
		if (recv(rx, data, sizeof(data), 0) != (ssize_t)sizeof(data))
			fail("recv(UDP receiver)");
		if (drain)
			udp_drain_errqueue(fd);
		if (close(fd) < 0)
			fail("close(UDP sender)");
	}
	close(rx);
}

/*
 * dl-boost-timer: a SCHED_DEADLINE task that runs out of runtime while
 * holding a PI futex is throttled: start_dl_timer() takes a reference on
 * its task_struct for the replenishment timer, which dl_task_timer() puts.
 * A second deadline task with an earlier deadline then blocks on the futex
 * and boosts the first; enqueue_task_dl() sees it boosted and throttled
 * and cancels the timer, which must put that reference.  The boosted task
 * sees the waiter, unlocks and exits; both are reaped, so the leaked
 * task_struct's rcu_users reaches zero and its usage never does.  The
 * normal path: a deadline task with a short period that is throttled and
 * replenished by its timer a few times, and exits.
 */
#define DL_SPIN_MAX_NS	(3ull * 1000 * 1000 * 1000)

struct dl_shared {
	unsigned int lock;	/* a PI futex: 0 or the owner's tid */
	volatile int locked;	/* the boosted task holds it */
};

/* <linux/sched/types.h>, SCHED_ATTR_SIZE_VER0 */
struct dl_attr {
	unsigned int size, policy;
	unsigned long long flags;
	int nice;
	unsigned int priority;
	unsigned long long runtime, deadline, period;
};

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void become_deadline(unsigned int runtime_ms, unsigned int deadline_ms,
			    unsigned int period_ms)
{
	struct dl_attr attr = {
		.size = sizeof(attr), .policy = 6 /* SCHED_DEADLINE */,
		.runtime = runtime_ms * 1000000ull,
		.deadline = deadline_ms * 1000000ull,
		.period = period_ms * 1000000ull,
	};

	if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0) {
		if (missing_feature(errno))
			unsupported("sched_setattr(SCHED_DEADLINE)");
		fail("sched_setattr(SCHED_DEADLINE)");
	}
}

static void pi_futex(unsigned int *word, int op)
{
	if (syscall(SYS_futex, word, op, 0, NULL, NULL, 0) < 0) {
		if (missing_feature(errno))
			unsupported("futex(FUTEX_LOCK_PI)");
		fail(op == 6 ? "futex(FUTEX_LOCK_PI)" : "futex(FUTEX_UNLOCK_PI)");
	}
}

static struct dl_shared *dl_sh;

/* runs out of runtime with the futex held, until a waiter boosts it */
static void dl_holder(int i)
{
	unsigned long long start = now_ns();

	(void)i;
	become_deadline(2, 400, 400);
	pi_futex(&dl_sh->lock, 6 /* FUTEX_LOCK_PI */);
	dl_sh->locked = 1;
	while (!(__atomic_load_n(&dl_sh->lock, __ATOMIC_RELAXED) & 0x80000000u) &&
	       now_ns() - start < DL_SPIN_MAX_NS)
		;
	pi_futex(&dl_sh->lock, 7 /* FUTEX_UNLOCK_PI */);
}

/* an earlier deadline: blocking on the holder's futex boosts it */
static void dl_waiter(int i)
{
	(void)i;
	become_deadline(5, 20, 1000);
	pi_futex(&dl_sh->lock, 6 /* FUTEX_LOCK_PI */);
	pi_futex(&dl_sh->lock, 7 /* FUTEX_UNLOCK_PI */);
}

/* the normal path: throttled and replenished by its timer */
static void dl_normal(int i)
{
	unsigned long long start = now_ns();

	(void)i;
	become_deadline(2, 30, 30);
	while (now_ns() - start < 100ull * 1000 * 1000)
		;
}

static void case_dl_boost(int n)
{
	struct timespec throttled = { .tv_sec = 0, .tv_nsec = 50 * 1000 * 1000 };
	struct timespec poll = { .tv_sec = 0, .tv_nsec = 1000 * 1000 };

	dl_sh = mmap(NULL, sizeof(*dl_sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (dl_sh == MAP_FAILED)
		fail("mmap");
	for (int i = 0; i < n; i++) {
		pid_t holder, waiter;

		in_child(dl_normal, i);
		dl_sh->lock = 0;
		dl_sh->locked = 0;
		holder = start_child(dl_holder, i);
		while (!dl_sh->locked) {
			if (waitpid(holder, NULL, WNOHANG) == holder)
				quit(1, "the futex holder exited early");
			nanosleep(&poll, NULL);
		}
		/* 2 ms of runtime: the holder is throttled by now */
		nanosleep(&throttled, NULL);
		waiter = start_child(dl_waiter, i);
		wait_child(holder);
		wait_child(waiter);
	}
	munmap(dl_sh, sizeof(*dl_sh));
}

/*
 * mptcp-join-connect-error: the in-kernel path manager, in init_net, with
 * two subflow endpoints: 127.0.0.2, and 127.0.0.3 on interface index 999,
 * which does not exist.  Each iteration opens an MPTCP connection over
 * loopback and exchanges a byte each way: once the connection is fully
 * established, the MPTCP socket's work item (a kworker) creates a subflow
 * from each endpoint.  The join from 127.0.0.2 succeeds and is freed when
 * the connection closes (the normal path); the one from 127.0.0.3 fails in
 * connect() (no route to an interface that does not exist), and its socket
 * must be put twice, by the error path and by its release.  The kworker
 * allocates both, never this process.  The endpoints are flushed at the
 * start and at the end.
 */
#define MPTCP_ENDP_BAD_IFINDEX	999
#define MPTCP_JOIN_WAIT_MS	200

struct genl_req {
	struct nlmsghdr nh;
	struct genlmsghdr g;
	char attrs[128];
} __attribute__((aligned(8)));

static struct nlattr *genl_attr(struct genl_req *req, unsigned short type,
				const void *data, unsigned short len)
{
	struct nlattr *nla = (struct nlattr *)((char *)req + NLMSG_ALIGN(req->nh.nlmsg_len));

	nla->nla_type = type;
	nla->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)nla + NLA_HDRLEN, data, len);
	req->nh.nlmsg_len = NLMSG_ALIGN(req->nh.nlmsg_len) + NLA_ALIGN(nla->nla_len);
	return nla;
}

static void genl_init(struct genl_req *req, unsigned short family, unsigned char cmd,
		      unsigned char version)
{
	memset(req, 0, sizeof(*req));
	req->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req->nh.nlmsg_type = family;
	req->g.cmd = cmd;
	req->g.version = version;
}

/* the id of generic netlink family name, or 0 when the kernel has none */
static unsigned short genl_family(const char *name)
{
	char reply[4096] __attribute__((aligned(8)));
	struct nlmsghdr *nh = (struct nlmsghdr *)reply;
	struct genl_req req;
	struct nlattr *nla;
	int len, err;

	genl_init(&req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	genl_attr(&req, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	memset(reply, 0, sizeof(reply));
	err = nl_talk_reply(&req.nh, reply, sizeof(reply));
	if (err == -ENOENT)
		return 0;
	if (err) {
		errno = -err;
		fail("CTRL_CMD_GETFAMILY");
	}
	len = (int)nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	nla = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
	while (len >= NLA_HDRLEN && nla->nla_len >= NLA_HDRLEN && nla->nla_len <= len) {
		if (nla->nla_type == CTRL_ATTR_FAMILY_ID)
			return *(unsigned short *)((char *)nla + NLA_HDRLEN);
		len -= NLA_ALIGN(nla->nla_len);
		nla = (struct nlattr *)((char *)nla + NLA_ALIGN(nla->nla_len));
	}
	quit(1, "CTRL_CMD_GETFAMILY: no family id in the reply");
}

static unsigned short mptcp_pm_family;

static void mptcp_pm(unsigned char cmd, const char *what, const char *addr, int ifindex)
{
	struct genl_req req;
	struct nlattr *nest;
	int err;

	genl_init(&req, mptcp_pm_family, cmd, MPTCP_PM_VER);
	if (addr) {
		unsigned short family = AF_INET;
		unsigned int flags = MPTCP_PM_ADDR_FLAG_SUBFLOW;
		struct in_addr in;

		inet_pton(AF_INET, addr, &in);
		nest = genl_attr(&req, MPTCP_PM_ATTR_ADDR | NLA_F_NESTED, NULL, 0);
		genl_attr(&req, MPTCP_PM_ADDR_ATTR_FAMILY, &family, sizeof(family));
		genl_attr(&req, MPTCP_PM_ADDR_ATTR_ADDR4, &in, sizeof(in));
		genl_attr(&req, MPTCP_PM_ADDR_ATTR_FLAGS, &flags, sizeof(flags));
		if (ifindex)
			genl_attr(&req, MPTCP_PM_ADDR_ATTR_IF_IDX, &ifindex, sizeof(ifindex));
		nest->nla_len = (unsigned short)((char *)&req + req.nh.nlmsg_len - (char *)nest);
	}
	err = nl_talk_reply(&req.nh, NULL, 0);
	if (err) {
		errno = -err;
		fail(what);
	}
}

static int mptcp_socket(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_MPTCP);

	if (fd < 0) {
		if (missing_feature(errno) || errno == EINVAL)
			unsupported("socket(IPPROTO_MPTCP)");
		fail("socket(IPPROTO_MPTCP)");
	}
	return fd;
}

static void xfer_byte(int from, int to)
{
	char c = 'm';

	if (write(from, &c, 1) != 1)
		fail("write(MPTCP)");
	if (read(to, &c, 1) != 1)
		fail("read(MPTCP)");
}

static void case_mptcp_join(int n)
{
	struct timespec wait = { .tv_nsec = MPTCP_JOIN_WAIT_MS * 1000 * 1000 };
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t alen = sizeof(addr);
	int l, c, a;

	nl_open(NETLINK_GENERIC, "socket(AF_NETLINK, NETLINK_GENERIC)");
	mptcp_pm_family = genl_family(MPTCP_PM_NAME);
	if (!mptcp_pm_family) {
		errno = ENOENT;
		unsupported("generic netlink family " MPTCP_PM_NAME);
	}
	mptcp_pm(MPTCP_PM_CMD_FLUSH_ADDRS, "MPTCP_PM_CMD_FLUSH_ADDRS", NULL, 0);
	/* before the connections: the kworker, not this syscall, joins */
	mptcp_pm(MPTCP_PM_CMD_ADD_ADDR, "MPTCP_PM_CMD_ADD_ADDR 127.0.0.2", "127.0.0.2", 0);
	mptcp_pm(MPTCP_PM_CMD_ADD_ADDR, "MPTCP_PM_CMD_ADD_ADDR 127.0.0.3", "127.0.0.3",
		 MPTCP_ENDP_BAD_IFINDEX);

	for (int i = 0; i < n; i++) {
		addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		addr.sin_port = 0;
		l = mptcp_socket();
		if (bind(l, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(l, 4) < 0)
			fail("bind/listen(MPTCP)");
		alen = sizeof(addr);
		if (getsockname(l, (struct sockaddr *)&addr, &alen) < 0)
			fail("getsockname");
		c = mptcp_socket();
		if (connect(c, (struct sockaddr *)&addr, sizeof(addr)) < 0)
			fail("connect(MPTCP)");
		a = accept(l, NULL, NULL);
		if (a < 0)
			fail("accept(MPTCP)");
		/* both ways: the connection is then fully established */
		xfer_byte(c, a);
		xfer_byte(a, c);
		nanosleep(&wait, NULL);	/* the kworker's joins */
		close(c);
		close(a);
		close(l);
	}
	mptcp_pm(MPTCP_PM_CMD_FLUSH_ADDRS, "MPTCP_PM_CMD_FLUSH_ADDRS", NULL, 0);
	close(nl_fd);
}

/*
 * loop-backing-file: LOOP_SET_FD with a backing file the loop driver
 * refuses (a directory: no read_iter).  loop_configure() takes a
 * reference on the file with fget() before it validates it, and must put
 * it on the -EINVAL return.  The trigger then closes the directory; the
 * file's counter keeps the leaked reference.  The normal path: the same
 * directory opened and closed, without the ioctl.
 */
static void case_loop(int n)
{
	const char *dir = getenv("TMPDIR");
	int loop, fd;

	if (!dir || !*dir)
		dir = "/tmp";
	loop = open("/dev/loop0", O_RDWR | O_CLOEXEC);
	if (loop < 0) {
		if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
			unsupported("/dev/loop0 (CONFIG_BLK_DEV_LOOP)");
		fail("/dev/loop0");
	}
	for (int i = 0; i < 2 * n; i++) {
		bool set_fd = i % 2;	/* the normal path first */

		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			fail(dir);
		if (set_fd) {
			if (ioctl(loop, LOOP_SET_FD, fd) == 0)
				quit(1, "LOOP_SET_FD with a directory succeeded, "
				     "expected EINVAL");
			if (errno != EINVAL)
				fail("ioctl(LOOP_SET_FD)");
		}
		if (close(fd) < 0)
			fail("close");
	}
	close(loop);
}

/*
 * netdev-bind-phc: per iteration a dummy network device (rtnetlink), a UDP
 * socket bound to it (SO_BINDTODEVICE) that asks for the device's PHC
 * virtual clock 0 (SO_TIMESTAMPING with SOF_TIMESTAMPING_BIND_PHC; a dummy
 * device has none: EINVAL), the socket closed and the device deleted.
 * Reading the clocks takes a reference on the device, which must be
 * dropped; where it is not, deleting the device waits for it forever
 * (netdev_run_todo()), so the delete runs in a child of its own, which the
 * trigger waits for 5 s at the most at the end: on the kernel with the
 * bug those children stay in D state (the guest is thrown away after the
 * run), holding only what fork() gave them.  The normal path: the same with a socket bound without the
 * setsockopt(), the device deleted by the trigger itself.
 */
#define PHC_DEVS_WAIT_S	5

/* an RTM_NEWLINK (of a device of @kind) or RTM_DELLINK (no kind) request for @name */
static void link_req(struct nl_req *req, int type, int flags, const char *name,
		     const char *kind)
{
	struct rtattr *info;

	memset(req, 0, sizeof(*req));
	req->nh.nlmsg_len = NLMSG_LENGTH(sizeof(req->ifi));
	req->nh.nlmsg_type = type;
	req->nh.nlmsg_flags = flags;
	req->ifi.ifi_family = AF_UNSPEC;
	nl_attr(req, IFLA_IFNAME, name, strlen(name) + 1);
	if (kind) {
		info = (struct rtattr *)((char *)req + NLMSG_ALIGN(req->nh.nlmsg_len));
		nl_attr(req, IFLA_LINKINFO, NULL, 0);
		nl_attr(req, IFLA_INFO_KIND, kind, strlen(kind) + 1);
		info->rta_len = (char *)req + req->nh.nlmsg_len - (char *)info;
	}
}

static void link_request(int type, int flags, const char *name, const char *kind)
{
	struct nl_req req;
	char what[64];
	int err;

	link_req(&req, type, flags, name, kind);
	err = nl_talk(&req);
	snprintf(what, sizeof(what), "RTM_NEWLINK %s", kind ?: "");
	if (err == -EOPNOTSUPP && kind) {
		errno = -err;
		unsupported(what);
	}
	if (err) {
		errno = -err;
		fail(type == RTM_NEWLINK ? what : "RTM_DELLINK");
	}
}

/*
 * A child that deletes the device rlphc<i>: it may never return.  It
 * sends on the trigger's own netlink socket and reads no answer (the
 * trigger reads on), so that a child stuck in the delete keeps no socket
 * of its own; the trigger checks that the device is gone when the child
 * ends.
 */
static void link_delete_child(int i)
{
	char name[IFNAMSIZ];
	struct nl_req req;

	snprintf(name, sizeof(name), "rlphc%d", i);
	link_req(&req, RTM_DELLINK, NLM_F_REQUEST, name, NULL);
	if (send(nl_fd, &req, req.nh.nlmsg_len, 0) != (ssize_t)req.nh.nlmsg_len)
		fail("send(RTM_DELLINK)");
}

/* does the network device @name exist? */
static bool link_exists(const char *name)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool exists;

	if (fd < 0)
		fail("socket(AF_INET, SOCK_DGRAM)");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	exists = ioctl(fd, SIOCGIFINDEX, &ifr) == 0;
	if (!exists && errno != ENODEV)
		fail("ioctl(SIOCGIFINDEX)");
	close(fd);
	return exists;
}

static void case_netdev_bind_phc(int n)
{
	struct so_timestamping ts = { .flags = SOF_TIMESTAMPING_BIND_PHC };
	pid_t *dels = calloc(n, sizeof(*dels));
	int left = n, waited = 0, status, fd;
	char name[IFNAMSIZ];

	if (!dels)
		fail("calloc");
	nl_open(NETLINK_ROUTE, "socket(AF_NETLINK, NETLINK_ROUTE)");
	for (int i = 0; i < 2 * n; i++) {
		bool bind_phc = i % 2;	/* the normal path first */

		snprintf(name, sizeof(name), "rlphc%d", i);
		link_request(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, name, "dummy");
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			fail("socket(AF_INET, SOCK_DGRAM)");
		if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, name, strlen(name) + 1) < 0)
			fail("setsockopt(SO_BINDTODEVICE)");
		if (bind_phc) {
			if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &ts, sizeof(ts)) == 0)
				quit(1, "SO_TIMESTAMPING binding PHC 0 of a dummy device "
				     "succeeded, expected EINVAL");
			if (errno != EINVAL)
				fail("setsockopt(SO_TIMESTAMPING, SOF_TIMESTAMPING_BIND_PHC)");
		}
		if (close(fd) < 0)
			fail("close");
		if (bind_phc)
			dels[i / 2] = start_child(link_delete_child, i);
		else
			link_request(RTM_DELLINK, 0, name, NULL);
	}
	while (left && waited++ < PHC_DEVS_WAIT_S * 20) {
		for (int i = 0; i < n; i++) {
			if (!dels[i] || waitpid(dels[i], &status, WNOHANG) != dels[i])
				continue;
			snprintf(name, sizeof(name), "rlphc%d", 2 * i + 1);
			if (!WIFEXITED(status) || WEXITSTATUS(status) || link_exists(name))
				quit(1, "the child deleting %s failed", name);
			dels[i] = 0;
			left--;
		}
		if (left)
			usleep(50 * 1000);
	}
	close(nl_fd);
	if (left)
		fprintf(stderr, "trigger: %s: %d device deletions still waiting after %d s\n",
			case_name, left, PHC_DEVS_WAIT_S);
	free(dels);
}

/*
 * nfc-vendor-cmd: per iteration an NFC device of the NCI simulator
 * (opening /dev/virtual_nci registers one: a struct nfc_dev and the
 * struct device it embeds), its index read with IOCTL_GET_NCIDEV_IDX, a
 * generic netlink command for it, and the close, which unregisters the
 * device and puts the driver's reference.  Every other iteration the
 * command is NFC_CMD_VENDOR: no NCI driver has vendor commands, so it
 * fails (ENODEV) once nfc_get_device() found the device, taking a
 * reference that must be put; otherwise NFC_CMD_GET_DEVICE, which gets
 * and puts it (the normal path).
 */
#define IOCTL_GET_NCIDEV_IDX	0

static unsigned short nfc_family;

/* NFC_CMD_GET_DEVICE or NFC_CMD_VENDOR for device @idx: its errno, negative */
static int nfc_cmd(unsigned char cmd, unsigned int idx)
{
	char reply[4096] __attribute__((aligned(8)));
	unsigned int zero = 0;
	struct genl_req req;

	genl_init(&req, nfc_family, cmd, NFC_GENL_VERSION);
	genl_attr(&req, NFC_ATTR_DEVICE_INDEX, &idx, sizeof(idx));
	if (cmd == NFC_CMD_VENDOR) {
		genl_attr(&req, NFC_ATTR_VENDOR_ID, &zero, sizeof(zero));
		genl_attr(&req, NFC_ATTR_VENDOR_SUBCMD, &zero, sizeof(zero));
	}
	return nl_talk_reply(&req.nh, reply, sizeof(reply));
}

static void case_nfc_vendor(int n)
{
	unsigned int idx;
	int fd, err;

	nl_open(NETLINK_GENERIC, "socket(AF_NETLINK, NETLINK_GENERIC)");
	nfc_family = genl_family(NFC_GENL_NAME);
	if (!nfc_family) {
		errno = ENOENT;
		unsupported("generic netlink family " NFC_GENL_NAME " (CONFIG_NFC)");
	}
	for (int i = 0; i < 2 * n; i++) {
		bool vendor = i % 2;	/* the normal path first */

		fd = open("/dev/virtual_nci", O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			if (missing_feature(errno) || errno == ENOENT)
				unsupported("/dev/virtual_nci (CONFIG_NFC_VIRTUAL_NCI)");
			fail("open /dev/virtual_nci");
		}
		if (ioctl(fd, IOCTL_GET_NCIDEV_IDX, &idx) < 0)
			fail("ioctl(IOCTL_GET_NCIDEV_IDX)");
		err = nfc_cmd(vendor ? NFC_CMD_VENDOR : NFC_CMD_GET_DEVICE, idx);
		if (vendor && err != -ENODEV)
			quit(1, "NFC_CMD_VENDOR on nfc%u: %s, expected ENODEV (no vendor commands)",
			     idx, strerror(-err));
		if (!vendor && err) {
			errno = -err;
			fail("NFC_CMD_GET_DEVICE");
		}
		if (close(fd) < 0)
			fail("close /dev/virtual_nci");
	}
	close(nl_fd);
}

/*
 * posix-timer-restore-id: with PR_TIMER_CREATE_RESTORE_IDS on (CRIU's
 * mode), timer_create() reads the timer ID it should get from
 * *created_timer_id.  When that read faults, the function must not have
 * allocated the timer yet.  The trigger passes an address that faults,
 * and checks for EFAULT.  The normal path: a timer created and deleted
 * with the mode off.  The raw system calls: libc's timer_create() keeps
 * its own timer IDs.
 */
static void case_posix_timer(int n)
{
	timer_t *bad = (timer_t *)8;	/* never mapped */
	timer_t id;

	for (int i = 0; i < n; i++) {
		if (syscall(SYS_timer_create, CLOCK_MONOTONIC, NULL, &id) < 0) {
			if (missing_feature(errno))
				unsupported("timer_create");
			fail("timer_create");
		}
		if (syscall(SYS_timer_delete, id) < 0)
			fail("timer_delete");

		if (prctl(PR_TIMER_CREATE_RESTORE_IDS,
			  PR_TIMER_CREATE_RESTORE_IDS_ON, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				unsupported("prctl(PR_TIMER_CREATE_RESTORE_IDS)");
			fail("prctl(PR_TIMER_CREATE_RESTORE_IDS)");
		}
		if (syscall(SYS_timer_create, CLOCK_MONOTONIC, NULL, bad) == 0)
			quit(1, "timer_create with a faulting ID address "
			     "succeeded, expected EFAULT");
		if (errno != EFAULT)
			fail("timer_create(faulting ID address)");
		if (prctl(PR_TIMER_CREATE_RESTORE_IDS,
			  PR_TIMER_CREATE_RESTORE_IDS_OFF, 0, 0, 0) < 0)
			fail("prctl(PR_TIMER_CREATE_RESTORE_IDS_OFF)");
	}
}

/*
 * xattr-fremove-name: fremovexattr() with a name it cannot import (empty:
 * ERANGE) after it took the file with fdget(), which in a process whose
 * descriptor table is shared (a second thread) takes a reference the
 * call must put.  Per iteration the trigger opens three files: one it
 * keeps open to the end (a process that holds files on purpose), one it
 * removes an attribute of (the normal path) and closes, one it calls
 * fremovexattr() on with the empty name (the leaking path) and closes.
 * Still running at the end (REALBUGS_STAY): the kept files' holder, and
 * the leaking calls' taker.
 */
static void *xattr_idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int xattr_open(int i, int kind)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/rl-xattr-%d-%d", i, kind);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		fail("open(/tmp/rl-xattr-*)");
	if (unlink(path) < 0)
		fail("unlink(/tmp/rl-xattr-*)");
	return fd;
}

static void case_xattr_fremove(int n)
{
	pthread_t idle;
	int err;

	/* a second thread: fdget() takes a reference, the table being shared */
	err = pthread_create(&idle, NULL, xattr_idle_thread, NULL);
	if (err) {
		errno = err;
		fail("pthread_create");
	}
	for (int i = 0; i < n; i++) {
		for (int kind = 0; kind < 3; kind++) {
			int fd = xattr_open(i, kind);

			/* kind 0 is kept, 1 the normal path, 2 the leaking one */
			if (kind < 2 && fremovexattr(fd, "user.perf-refleak") == 0)
				quit(1, "fremovexattr(user.perf-refleak) removed an attribute");
			if (kind == 2 && (fremovexattr(fd, "") == 0 || errno != ERANGE))
				quit(1, "fremovexattr(\"\") did not fail with ERANGE");
			if (kind)
				close(fd);
		}
	}
}

/*
 * j1939-second-rts: SAE J1939 transport sessions received on a virtual
 * CAN device.  A J1939 socket bound to address J1939_LOCAL on vcan0 makes
 * the kernel the receiver of transfers to that address; a broadcast
 * manager (CAN_BCM) socket sends the frames from a kernel timer, J1939_GAP_MS
 * apart, so that the receive path runs in the timer's softirq: the
 * sessions are allocated there, not by this process.  Per iteration, from
 * one sender address a transfer the normal way (RTS, CTS by the kernel,
 * the two data packets, EOMA by the kernel: the session completes and is
 * freed), and from another an RTS sent twice: the second aborts the
 * session, which without the fix stays on the active list for good.  The
 * device stays (deleting it would wait for the leaked sessions' device
 * references forever); closing the J1939 socket detaches the stack from
 * it.
 */
#define J1939_LOCAL	0x80
#define J1939_PGN	0xff00u		/* a proprietary PGN, PDU2 */
#define J1939_GAP_MS	5
#define J1939_AGE_MS	1500		/* past perf refleak report's --min-age */
#define J1939_MAX_N	(256 / 5)	/* a BCM operation sends 256 frames at most */
#define J1939_TP_CM	0xec		/* PF of TP.CM (RTS, CTS, EOMA, abort) */
#define J1939_TP_DT	0xeb		/* PF of TP.DT */

/* a frame of PF @pf from address @sa to J1939_LOCAL */
static void j1939_frame(struct can_frame *cf, unsigned char pf, unsigned char sa,
			const unsigned char data[8])
{
	memset(cf, 0, sizeof(*cf));
	cf->can_id = CAN_EFF_FLAG | 6u << 26 | (unsigned int)pf << 16 | J1939_LOCAL << 8 | sa;
	cf->len = 8;
	memcpy(cf->data, data, 8);
}

/* TP.CM RTS: 9 bytes in 2 packets, of J1939_PGN */
static void j1939_rts(struct can_frame *cf, unsigned char sa)
{
	const unsigned char rts[8] = { 0x10, 9, 0, 2, 0xff, J1939_PGN & 0xff,
				       (J1939_PGN >> 8) & 0xff, J1939_PGN >> 16 };

	j1939_frame(cf, J1939_TP_CM, sa, rts);
}

static void j1939_dt(struct can_frame *cf, unsigned char sa, unsigned char seq)
{
	const unsigned char dt[8] = { seq, 'r', 'e', 'f', 'l', 'e', 'a', 'k' };

	j1939_frame(cf, J1939_TP_DT, sa, dt);
}

static void case_j1939_second_rts(int n)
{
	struct {
		struct bcm_msg_head head;
		struct can_frame frames[5 * J1939_MAX_N];
	} msg;
	struct sockaddr_can addr = { .can_family = AF_CAN };
	struct can_frame *cf = msg.frames;
	struct ifreq ifr = { 0 };
	int fd, j, bcm;

	if (n > J1939_MAX_N)
		quit(1, "at most %d iterations", J1939_MAX_N);
	nl_open(NETLINK_ROUTE, "socket(AF_NETLINK, NETLINK_ROUTE)");
	link_request(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, "rlcan0", "vcan");
	close(nl_fd);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fail("socket(AF_INET, SOCK_DGRAM)");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "rlcan0");
	ifr.ifr_flags = IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		fail("ioctl(SIOCSIFFLAGS rlcan0 up)");
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0)
		fail("ioctl(SIOCGIFINDEX rlcan0)");
	close(fd);
	addr.can_ifindex = ifr.ifr_ifindex;

	j = socket(PF_CAN, SOCK_DGRAM | SOCK_CLOEXEC, CAN_J1939);
	if (j < 0 && missing_feature(errno))
		unsupported("socket(PF_CAN, CAN_J1939)");
	if (j < 0)
		fail("socket(PF_CAN, CAN_J1939)");
	addr.can_addr.j1939.name = J1939_NO_NAME;
	addr.can_addr.j1939.pgn = J1939_NO_PGN;
	addr.can_addr.j1939.addr = J1939_LOCAL;
	if (bind(j, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		fail("bind(CAN_J1939)");

	bcm = socket(PF_CAN, SOCK_DGRAM | SOCK_CLOEXEC, CAN_BCM);
	if (bcm < 0 && missing_feature(errno))
		unsupported("socket(PF_CAN, CAN_BCM)");
	if (bcm < 0)
		fail("socket(PF_CAN, CAN_BCM)");
	memset(&addr.can_addr, 0, sizeof(addr.can_addr));
	if (connect(bcm, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		fail("connect(CAN_BCM)");

	memset(&msg.head, 0, sizeof(msg.head));
	for (int i = 0; i < n; i++) {
		unsigned char normal = i, twice = 0x40 + i;

		j1939_rts(cf++, normal);
		j1939_dt(cf++, normal, 1);
		j1939_dt(cf++, normal, 2);
		j1939_rts(cf++, twice);
		j1939_rts(cf++, twice);
	}
	msg.head.opcode = TX_SETUP;
	msg.head.flags = SETTIMER | STARTTIMER;
	msg.head.nframes = cf - msg.frames;
	msg.head.count = msg.head.nframes;
	msg.head.ival1.tv_usec = J1939_GAP_MS * 1000;
	msg.head.can_id = msg.frames[0].can_id;
	if (write(bcm, &msg, sizeof(msg.head) + msg.head.nframes * sizeof(*cf)) < 0)
		fail("write(CAN_BCM TX_SETUP)");
	/* the frames and the kernel's answers; then the leaked sessions age */
	usleep((msg.head.nframes + 1) * J1939_GAP_MS * 1000 + J1939_AGE_MS * 1000);
	close(bcm);
	close(j);
}

static const struct {
	const char *name;
	void (*run)(int n);
} cases[] = {
	{ "keys-join-session",	case_keys },
	{ "inotify-mask-create", case_inotify },
	{ "unix-oob-pid",	case_unix },
	{ "ping-group-info",	case_ping },
	{ "nexthop-blackhole",	case_nexthop },
	{ "tcp-filter-reqsk",	case_tcp_filter },
	{ "udp-zerocopy-tstamp", case_udp_zerocopy },
	{ "dl-boost-timer",	case_dl_boost },
	{ "mptcp-join-connect-error", case_mptcp_join },
	{ "loop-backing-file",	case_loop },
	{ "posix-timer-restore-id", case_posix_timer },
	{ "netdev-bind-phc",	case_netdev_bind_phc },
	{ "nfc-vendor-cmd",	case_nfc_vendor },
	{ "xattr-fremove-name",	case_xattr_fremove },
	{ "j1939-second-rts",	case_j1939_second_rts },
};

int main(int argc, char **argv)
{
	unsigned int c;
	char *end;
	long n;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
			printf("%s\n", cases[c].name);
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: trigger <case-name> <N> | trigger --list\n");
		return 1;
	}
	case_name = argv[1];
	errno = 0;
	n = strtol(argv[2], &end, 10);
	if (errno || *end || end == argv[2] || n < 1 || n > 100000)
		quit(1, "bad count '%s'", argv[2]);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		if (!strcmp(cases[c].name, argv[1])) {
			cases[c].run((int)n);
			settle();
			stay();
			return 0;
		}
	}
	quit(1, "unknown case (trigger --list shows them)");
}
