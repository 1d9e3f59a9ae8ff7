// SPDX-License-Identifier: GPL-2.0
/*
 * balanced: a real, balanced workload for perf refleak's "no false leak"
 * check.  It loops over a list of exercises (process, file, IPC, timer,
 * socket, namespace, key ... syscalls) until the time is up; every exercise
 * destroys every object it creates before it returns, so a recording of this
 * program must show no leak.  A feature the kernel lacks is skipped (once,
 * on stderr); any other failure exits 1 so a broken workload is noticed.
 *
 * Build: gcc -static -O2 -Wall -Wextra -o balanced balanced.c
 * Usage: balanced [-t SECONDS] [-s SETTLE] [-v]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/aio_abi.h>
#include <linux/keyctl.h>
#include <mqueue.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SKIP 1			/* an exercise's "feature missing" return */
#define CHILD_SKIPPED 99	/* a child's exit code: it printed the skip */

/* Errnos that may mean "the kernel lacks this" on an exercise's first run. */
#define SK_PERM   0x1		/* EPERM/EACCES too (unshare, keys, mount) */
#define SK_NOENT  0x2		/* ENOENT too (mqueue) */
#define SK_NODEV  0x4		/* ENODEV too (a filesystem type) */

struct exercise {
	const char *name;
	int (*fn)(void);
	unsigned long count;
	double secs;		/* time spent in it, for -v */
	int ok_once;		/* succeeded once: no more skipping */
	int skipped;
};

static struct exercise *cur;
static int in_child;
static int verbose;
static pid_t main_pid;
static const char *tmpdir = "/tmp";
extern char **environ;

/* What die() removes, so a failing run leaves nothing behind either. */
static char p_fs[256], p_inotify[256], p_aio[256], p_mnt[256], mq_name[64];
static int g_msqid = -1, g_semid = -1, g_shmid = -1, g_mq;

/* How a child is exec'd: /bin/true, busybox true, or ourselves --noop. */
static const char *exec_path;
static char *exec_argv[3];

static volatile sig_atomic_t stop;

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP || flag == FTW_D)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void cleanup(void)
{
	const char *paths[] = { p_fs, p_inotify, p_aio, p_mnt };
	size_t i;

	if (in_child || getpid() != main_pid)
		return;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct stat st;

		if (lstat(paths[i], &st) == 0)
			nftw(paths[i], rm_one, 8, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	}
	if (g_msqid >= 0)
		msgctl(g_msqid, IPC_RMID, NULL);
	if (g_semid >= 0)
		semctl(g_semid, 0, IPC_RMID);
	if (g_shmid >= 0)
		shmctl(g_shmid, IPC_RMID, NULL);
	if (g_mq)
		mq_unlink(mq_name);
}

static void __attribute__((noreturn)) die_exit(void)
{
	if (in_child)
		_exit(1);
	cleanup();
	exit(1);
}

/* An unexpected failure of a present feature: say where, exit 1. */
static void __attribute__((noreturn)) fail(const char *call, int err)
{
	fprintf(stderr, "balanced: %s: %s: %s\n", cur ? cur->name : "main",
		call, strerror(err));
	die_exit();
}

static void __attribute__((noreturn, format(printf, 1, 2)))
failx(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "balanced: %s: ", cur ? cur->name : "main");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	die_exit();
}

static int is_missing(int err, unsigned int extra)
{
	switch (err) {
	case ENOSYS:
	case EINVAL:
	case EAFNOSUPPORT:
	case EPROTONOSUPPORT:
	case EOPNOTSUPP:
		return 1;
	case EPERM:
	case EACCES:
		return !!(extra & SK_PERM);
	case ENOENT:
		return !!(extra & SK_NOENT);
	case ENODEV:
		return !!(extra & SK_NODEV);
	}
	return 0;
}

/*
 * The first call of a feature failed with @err: skip the exercise if that
 * means "not in this kernel" and it never worked before, else fail.  Call
 * it only while the exercise holds nothing.  In a child, exits.
 */
static int skip_or_fail(const char *call, int err, unsigned int extra)
{
	if (cur->ok_once || !is_missing(err, extra))
		fail(call, err);
	fprintf(stderr, "balanced: skipping %s: %s\n", cur->name, strerror(err));
	if (in_child)
		_exit(CHILD_SKIPPED);
	cur->skipped = 1;
	return SKIP;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void xclose(int fd)
{
	if (close(fd) < 0)
		fail("close", errno);
}

static void xwrite(int fd, const void *buf, size_t len, const char *what)
{
	ssize_t n = write(fd, buf, len);

	if (n < 0)
		fail(what, errno);
	if ((size_t)n != len)
		failx("%s: short write %zd of %zu", what, n, len);
}

static void xread(int fd, void *buf, size_t len, const char *what)
{
	ssize_t n = read(fd, buf, len);

	if (n < 0)
		fail(what, errno);
	if ((size_t)n != len)
		failx("%s: short read %zd of %zu", what, n, len);
}

static void xwait(pid_t pid, const char *what)
{
	int st;

	if (waitpid(pid, &st, 0) < 0)
		fail("waitpid", errno);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		failx("%s: child status 0x%x", what, st);
}

/* Runs @body in a forked child; its exit code says ok, skipped or failed. */
static int run_in_child(void (*body)(void))
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail("fork", errno);
	if (pid == 0) {
		in_child = 1;
		body();
		_exit(0);
	}
	if (waitpid(pid, &st, 0) < 0)
		fail("waitpid", errno);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == CHILD_SKIPPED && !cur->ok_once) {
		cur->skipped = 1;
		return SKIP;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
		die_exit();	/* the child said why */
	failx("child: status 0x%x", st);
}

static void tmp_path(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "%s/balanced-%d-%s", tmpdir, (int)main_pid, what);
}

/* ------------------------------------------------------------------ */
/* processes and threads                                              */

static sigset_t blocked;	/* SIGUSR1, SIGALRM: for signalfd, itimer */

static int ex_fork_exec(void)
{
	pid_t pid;

	pid = fork();
	if (pid < 0)
		fail("fork", errno);
	if (pid == 0) {
		sigprocmask(SIG_UNBLOCK, &blocked, NULL);
		execve(exec_path, exec_argv, environ);
		_exit(127);
	}
	xwait(pid, "fork+execve");
	return 0;
}

/* posix_spawn is clone(CLONE_VM | CLONE_VFORK) + execve in glibc. */
static int ex_spawn(void)
{
	posix_spawnattr_t attr;
	sigset_t none;
	pid_t pid;
	int err;

	sigemptyset(&none);
	if ((err = posix_spawnattr_init(&attr)) ||
	    (err = posix_spawnattr_setsigmask(&attr, &none)) ||
	    (err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK)))
		fail("posix_spawnattr", err);
	err = posix_spawn(&pid, exec_path, NULL, &attr, exec_argv, environ);
	posix_spawnattr_destroy(&attr);
	if (err)
		fail("posix_spawn", err);
	xwait(pid, "posix_spawn");
	return 0;
}

#define NTHREADS 4
static pthread_mutex_t th_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long th_sum;

static void *thread_fn(void *arg)
{
	unsigned long i, v = (uintptr_t)arg;

	for (i = 0; i < 100; i++) {
		pthread_mutex_lock(&th_lock);
		th_sum += v;
		pthread_mutex_unlock(&th_lock);
	}
	return NULL;
}

static int ex_threads(void)
{
	pthread_t th[NTHREADS];
	int i, err;

	th_sum = 0;
	for (i = 0; i < NTHREADS; i++) {
		err = pthread_create(&th[i], NULL, thread_fn, (void *)(uintptr_t)(i + 1));
		if (err)
			fail("pthread_create", err);
	}
	for (i = 0; i < NTHREADS; i++) {
		err = pthread_join(th[i], NULL);
		if (err)
			fail("pthread_join", err);
	}
	if (th_sum != 100UL * NTHREADS * (NTHREADS + 1) / 2)
		failx("threads: sum %lu", th_sum);
	return 0;
}

/* ------------------------------------------------------------------ */
/* pipes and files                                                    */

static int ex_pipe(void)
{
	char out[4096], in[4096];
	int p[2];

	memset(out, 'p', sizeof(out));
	if (pipe2(p, O_CLOEXEC) < 0)
		fail("pipe2", errno);
	xwrite(p[1], out, sizeof(out), "write");
	xread(p[0], in, sizeof(in), "read");
	if (memcmp(in, out, sizeof(in)))
		failx("pipe: data mismatch");
	xclose(p[1]);
	if (read(p[0], in, 1) != 0)
		failx("pipe: no EOF");
	xclose(p[0]);
	return 0;
}

static int ex_files(void)
{
	char sub[300], f[300], g[300], sl[300], hl[300], target[300];
	char buf[8192], back[8192];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(sub, sizeof(sub), "%s/sub", p_fs);
	snprintf(f, sizeof(f), "%s/file", p_fs);
	snprintf(g, sizeof(g), "%s/sub/renamed", p_fs);
	snprintf(sl, sizeof(sl), "%s/symlink", p_fs);
	snprintf(hl, sizeof(hl), "%s/hardlink", p_fs);
	memset(buf, 'f', sizeof(buf));

	if (mkdir(p_fs, 0700) < 0)
		fail("mkdir", errno);
	if (mkdir(sub, 0700) < 0)
		fail("mkdir sub", errno);
	fd = open(f, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		fail("open O_CREAT", errno);
	xwrite(fd, buf, sizeof(buf), "write");
	if (fsync(fd) < 0)
		fail("fsync", errno);
	xclose(fd);
	if (rename(f, g) < 0)
		fail("rename", errno);
	if (stat(g, &st) < 0)
		fail("stat", errno);
	if (st.st_size != (off_t)sizeof(buf))
		failx("stat: size %lld", (long long)st.st_size);
	if (symlink("sub/renamed", sl) < 0)
		fail("symlink", errno);
	n = readlink(sl, target, sizeof(target) - 1);
	if (n < 0)
		fail("readlink", errno);
	if (n != 11 || memcmp(target, "sub/renamed", 11))
		failx("readlink: wrong target");
	if (link(g, hl) < 0)
		fail("link", errno);
	if (stat(sl, &st) < 0)
		fail("stat symlink", errno);
	if (st.st_nlink != 2)
		failx("stat: nlink %lu", (unsigned long)st.st_nlink);
	fd = open(hl, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail("open", errno);
	xread(fd, back, sizeof(back), "read");
	xclose(fd);
	if (memcmp(buf, back, sizeof(buf)))
		failx("files: data mismatch");
	if (unlink(sl) < 0 || unlink(hl) < 0 || unlink(g) < 0)
		fail("unlink", errno);
	if (rmdir(sub) < 0 || rmdir(p_fs) < 0)
		fail("rmdir", errno);
	return 0;
}

/* ------------------------------------------------------------------ */
/* namespaces (each in a child that exits)                            */

static void lo_up(int quiet_missing);

static void child_uts_ipc(void)
{
	struct utsname u;
	struct { long mtype; char mtext[8]; } m = { 1, "ipc-ns" };
	int id;

	if (unshare(CLONE_NEWUTS | CLONE_NEWIPC) < 0)
		skip_or_fail("unshare(CLONE_NEWUTS|CLONE_NEWIPC)", errno, SK_PERM);
	if (sethostname("balanced-ns", 11) < 0)
		fail("sethostname", errno);
	if (uname(&u) < 0)
		fail("uname", errno);
	if (strcmp(u.nodename, "balanced-ns"))
		failx("uname: nodename %s", u.nodename);
	/* One message queue in the new IPC namespace, removed before exit. */
	id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (id < 0)
		return;		/* no SysV IPC: the namespace alone */
	if (msgsnd(id, &m, sizeof(m.mtext), IPC_NOWAIT) < 0)
		fail("msgsnd", errno);
	if (msgrcv(id, &m, sizeof(m.mtext), 0, IPC_NOWAIT) < 0)
		fail("msgrcv", errno);
	if (msgctl(id, IPC_RMID, NULL) < 0)
		fail("msgctl(IPC_RMID)", errno);
}

static int ex_ns_uts_ipc(void)
{
	return run_in_child(child_uts_ipc);
}

static void child_net(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	char buf[8];
	int s;

	if (unshare(CLONE_NEWNET) < 0)
		skip_or_fail("unshare(CLONE_NEWNET)", errno, SK_PERM);
	/* The new namespace's own loopback, up, and one datagram over it. */
	lo_up(1);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;		/* no IPv4: the namespace alone */
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		fail("bind", errno);
	if (getsockname(s, (struct sockaddr *)&a, &alen) < 0)
		fail("getsockname", errno);
	if (sendto(s, "netns", 5, 0, (struct sockaddr *)&a, sizeof(a)) != 5)
		fail("sendto", errno);
	if (recv(s, buf, sizeof(buf), 0) != 5)
		fail("recv", errno);
	xclose(s);
}

static int ex_ns_net(void)
{
	return run_in_child(child_net);
}

static void child_mnt(void)
{
	char f[300];
	int fd;

	if (unshare(CLONE_NEWNS) < 0)
		skip_or_fail("unshare(CLONE_NEWNS)", errno, SK_PERM);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		skip_or_fail("mount(MS_PRIVATE)", errno, SK_PERM);
	if (mount("balanced", p_mnt, "tmpfs", 0, "size=64k") < 0)
		skip_or_fail("mount tmpfs", errno, SK_PERM | SK_NODEV);
	snprintf(f, sizeof(f), "%s/file", p_mnt);
	fd = open(f, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		fail("open", errno);
	xwrite(fd, "mnt", 3, "write");
	xclose(fd);
	if (unlink(f) < 0)
		fail("unlink", errno);
	if (umount(p_mnt) < 0)
		fail("umount", errno);
}

static int ex_ns_mnt(void)
{
	int ret;

	if (mkdir(p_mnt, 0700) < 0)
		fail("mkdir", errno);
	ret = run_in_child(child_mnt);
	if (rmdir(p_mnt) < 0)
		fail("rmdir", errno);
	return ret;
}

static void child_pid(void)
{
	pid_t pid;

	if (unshare(CLONE_NEWPID) < 0)
		skip_or_fail("unshare(CLONE_NEWPID)", errno, SK_PERM);
	pid = fork();		/* the new namespace's init */
	if (pid < 0)
		fail("fork", errno);
	if (pid == 0)
		_exit(getpid() == 1 ? 0 : 3);
	xwait(pid, "pid-ns init");
}

static int ex_ns_pid(void)
{
	return run_in_child(child_pid);
}

/* ------------------------------------------------------------------ */
/* keys: a key in a new session keyring, in a child                   */

static void child_keys(void)
{
	static const char payload[] = "balanced key payload";
	char buf[64];
	long kr, key, n;

	kr = syscall(__NR_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL);
	if (kr < 0)
		skip_or_fail("keyctl(JOIN_SESSION_KEYRING)", errno, SK_PERM);
	key = syscall(__NR_add_key, "user", "balanced:key", payload,
		      sizeof(payload), KEY_SPEC_SESSION_KEYRING);
	if (key < 0)
		fail("add_key", errno);
	n = syscall(__NR_keyctl, KEYCTL_READ, key, buf, sizeof(buf));
	if (n < 0)
		fail("keyctl(READ)", errno);
	if (n != sizeof(payload) || memcmp(buf, payload, sizeof(payload)))
		failx("keyctl(READ): payload mismatch");
	if (syscall(__NR_keyctl, KEYCTL_REVOKE, key) < 0)
		fail("keyctl(REVOKE)", errno);
	if (syscall(__NR_keyctl, KEYCTL_UNLINK, key, KEY_SPEC_SESSION_KEYRING) < 0)
		fail("keyctl(UNLINK)", errno);
}

static int ex_keys(void)
{
	return run_in_child(child_keys);
}

/* ------------------------------------------------------------------ */
/* inotify                                                            */

static int ex_inotify(void)
{
	char f[300], buf[4096] __attribute__((aligned(8)));
	const struct inotify_event *ev;
	int ifd, wd, fd, seen = 0;
	ssize_t n, off;

	ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ifd < 0)
		return skip_or_fail("inotify_init1", errno, 0);
	if (mkdir(p_inotify, 0700) < 0)
		fail("mkdir", errno);
	wd = inotify_add_watch(ifd, p_inotify, IN_CREATE | IN_DELETE);
	if (wd < 0)
		fail("inotify_add_watch", errno);
	snprintf(f, sizeof(f), "%s/file", p_inotify);
	fd = open(f, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		fail("open", errno);
	xclose(fd);
	if (unlink(f) < 0)
		fail("unlink", errno);
	n = read(ifd, buf, sizeof(buf));
	if (n < 0)
		fail("read", errno);
	for (off = 0; off < n; off += sizeof(*ev) + ev->len) {
		ev = (const struct inotify_event *)(buf + off);
		seen |= ev->mask & (IN_CREATE | IN_DELETE);
	}
	if (seen != (IN_CREATE | IN_DELETE))
		failx("inotify: events 0x%x", seen);
	if (inotify_rm_watch(ifd, wd) < 0)
		fail("inotify_rm_watch", errno);
	xclose(ifd);
	if (rmdir(p_inotify) < 0)
		fail("rmdir", errno);
	return 0;
}

/* ------------------------------------------------------------------ */
/* timers                                                             */

static int ex_timerfd(void)
{
	struct itimerspec its = { .it_value = { 0, 200000 } };	/* 0.2 ms */
	uint64_t exp;
	int fd;

	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0)
		return skip_or_fail("timerfd_create", errno, 0);
	if (timerfd_settime(fd, 0, &its, NULL) < 0)
		fail("timerfd_settime", errno);
	xread(fd, &exp, sizeof(exp), "read");	/* blocks until it fires */
	if (exp != 1)
		failx("timerfd: %llu expirations", (unsigned long long)exp);
	xclose(fd);
	return 0;
}

static int ex_posix_timer(void)
{
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	struct itimerspec its = { .it_value = { 1, 0 } }, left;
	timer_t t;

	if (timer_create(CLOCK_MONOTONIC, &sev, &t) < 0)
		return skip_or_fail("timer_create", errno, 0);
	if (timer_settime(t, 0, &its, NULL) < 0)
		fail("timer_settime", errno);
	if (timer_gettime(t, &left) < 0)
		fail("timer_gettime", errno);
	if (left.it_value.tv_sec == 0 && left.it_value.tv_nsec == 0)
		failx("timer_gettime: not armed");
	if (timer_delete(t) < 0)	/* deleted while armed */
		fail("timer_delete", errno);
	return 0;
}

static int ex_itimer(void)
{
	struct itimerval itv = { .it_value = { 0, 200 } };	/* 0.2 ms */
	struct timespec to = { 5, 0 };
	sigset_t alrm;
	int sig;

	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	if (setitimer(ITIMER_REAL, &itv, NULL) < 0)
		return skip_or_fail("setitimer", errno, 0);
	do
		sig = sigtimedwait(&alrm, NULL, &to);
	while (sig < 0 && errno == EINTR);
	if (sig < 0)
		fail("sigtimedwait(SIGALRM)", errno);
	return 0;
}

/* ------------------------------------------------------------------ */
/* eventfd, signalfd, epoll                                           */

static int ex_eventfd(void)
{
	uint64_t v = 3;
	int fd;

	fd = eventfd(0, EFD_CLOEXEC);
	if (fd < 0)
		return skip_or_fail("eventfd", errno, 0);
	xwrite(fd, &v, sizeof(v), "write");
	v = 0;
	xread(fd, &v, sizeof(v), "read");
	if (v != 3)
		failx("eventfd: read %llu", (unsigned long long)v);
	xclose(fd);
	return 0;
}

static int ex_signalfd(void)
{
	struct signalfd_siginfo si;
	sigset_t usr1;
	int fd;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	fd = signalfd(-1, &usr1, SFD_CLOEXEC);
	if (fd < 0)
		return skip_or_fail("signalfd", errno, 0);
	if (kill(getpid(), SIGUSR1) < 0)
		fail("kill", errno);
	xread(fd, &si, sizeof(si), "read");
	if (si.ssi_signo != SIGUSR1)
		failx("signalfd: signal %u", si.ssi_signo);
	xclose(fd);
	return 0;
}

static int ex_epoll(void)
{
	struct epoll_event ev = { .events = EPOLLIN }, evs[4];
	uint64_t one = 1;
	int ep, efd, p[2], n;
	char c;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return skip_or_fail("epoll_create1", errno, 0);
	if (pipe2(p, O_CLOEXEC) < 0)
		fail("pipe2", errno);
	efd = eventfd(0, EFD_CLOEXEC);	/* optional: CONFIG_EVENTFD */
	ev.data.fd = p[0];
	if (epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) < 0)
		fail("epoll_ctl(ADD pipe)", errno);
	if (efd >= 0) {
		ev.data.fd = efd;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) < 0)
			fail("epoll_ctl(ADD eventfd)", errno);
		xwrite(efd, &one, sizeof(one), "write eventfd");
	}
	xwrite(p[1], "e", 1, "write pipe");
	do
		n = epoll_wait(ep, evs, 4, 5000);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		fail("epoll_wait", errno);
	if (n != (efd >= 0 ? 2 : 1))
		failx("epoll_wait: %d events", n);
	xread(p[0], &c, 1, "read pipe");
	if (efd >= 0) {
		xread(efd, &one, sizeof(one), "read eventfd");
		if (epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL) < 0)
			fail("epoll_ctl(DEL eventfd)", errno);
		xclose(efd);
	}
	if (epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL) < 0)
		fail("epoll_ctl(DEL pipe)", errno);
	xclose(p[0]);
	xclose(p[1]);
	xclose(ep);
	return 0;
}

/* ------------------------------------------------------------------ */
/* SysV IPC                                                           */

static int ex_sysv_msg(void)
{
	struct { long mtype; char mtext[32]; } m = { 7, "sysv message" }, r;

	g_msqid = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (g_msqid < 0)
		return skip_or_fail("msgget", errno, 0);
	if (msgsnd(g_msqid, &m, sizeof(m.mtext), IPC_NOWAIT) < 0)
		fail("msgsnd", errno);
	if (msgrcv(g_msqid, &r, sizeof(r.mtext), 7, IPC_NOWAIT) != sizeof(r.mtext))
		fail("msgrcv", errno);
	if (msgctl(g_msqid, IPC_RMID, NULL) < 0)
		fail("msgctl(IPC_RMID)", errno);
	g_msqid = -1;
	return 0;
}

static int ex_sysv_sem(void)
{
	struct sembuf up = { 0, 1, IPC_NOWAIT }, down = { 0, -1, IPC_NOWAIT };

	g_semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	if (g_semid < 0)
		return skip_or_fail("semget", errno, 0);
	if (semop(g_semid, &up, 1) < 0)
		fail("semop(+1)", errno);
	/* No SEM_UNDO: its per-process undo list would live until exit. */
	if (semop(g_semid, &down, 1) < 0)
		fail("semop(-1)", errno);
	if (semctl(g_semid, 0, IPC_RMID) < 0)
		fail("semctl(IPC_RMID)", errno);
	g_semid = -1;
	return 0;
}

static int ex_sysv_shm(void)
{
	char *p;

	g_shmid = shmget(IPC_PRIVATE, 8192, IPC_CREAT | 0600);
	if (g_shmid < 0)
		return skip_or_fail("shmget", errno, 0);
	p = shmat(g_shmid, NULL, 0);
	if (p == (void *)-1)
		fail("shmat", errno);
	memset(p, 's', 8192);
	if (shmdt(p) < 0)
		fail("shmdt", errno);
	if (shmctl(g_shmid, IPC_RMID, NULL) < 0)
		fail("shmctl(IPC_RMID)", errno);
	g_shmid = -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* POSIX message queue                                                */

static int ex_mqueue(void)
{
	struct mq_attr attr = { .mq_maxmsg = 4, .mq_msgsize = 64 };
	char buf[64];
	unsigned int prio;
	mqd_t q;

	q = mq_open(mq_name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600, &attr);
	if (q == (mqd_t)-1)
		return skip_or_fail("mq_open", errno, SK_NOENT);
	g_mq = 1;
	if (mq_send(q, "mqueue", 6, 3) < 0)
		fail("mq_send", errno);
	if (mq_receive(q, buf, sizeof(buf), &prio) != 6 || prio != 3)
		fail("mq_receive", errno);
	if (mq_close(q) < 0)
		fail("mq_close", errno);
	if (mq_unlink(mq_name) < 0)
		fail("mq_unlink", errno);
	g_mq = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* AIO (raw syscalls)                                                 */

static int ex_aio(void)
{
	char buf[4096] __attribute__((aligned(64))), back[4096];
	aio_context_t ctx = 0;
	struct iocb cb, *cbs[1] = { &cb };
	struct io_event ev;
	struct timespec to = { 5, 0 };
	long n;
	int fd;

	if (syscall(__NR_io_setup, 4, &ctx) < 0)
		return skip_or_fail("io_setup", errno, 0);
	memset(buf, 'a', sizeof(buf));
	fd = open(p_aio, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		fail("open", errno);
	xwrite(fd, buf, sizeof(buf), "write");
	memset(&cb, 0, sizeof(cb));
	cb.aio_data = 0xba1;
	cb.aio_lio_opcode = IOCB_CMD_PREAD;
	cb.aio_fildes = fd;
	cb.aio_buf = (uintptr_t)back;
	cb.aio_nbytes = sizeof(back);
	cb.aio_offset = 0;
	if (syscall(__NR_io_submit, ctx, 1, cbs) != 1)
		fail("io_submit", errno);
	do
		n = syscall(__NR_io_getevents, ctx, 1, 1, &ev, &to);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		fail("io_getevents", n < 0 ? errno : ETIMEDOUT);
	if (ev.data != 0xba1 || ev.res != (long long)sizeof(back) ||
	    memcmp(buf, back, sizeof(back)))
		failx("aio: event res %lld", (long long)ev.res);
	if (syscall(__NR_io_destroy, ctx) < 0)
		fail("io_destroy", errno);
	xclose(fd);
	if (unlink(p_aio) < 0)
		fail("unlink", errno);
	return 0;
}

/* ------------------------------------------------------------------ */
/* sockets                                                            */

/* Brings "lo" up if it is down; no network, or no permission, is no error. */
static void lo_up(int quiet_missing)
{
	struct ifreq ifr;
	int s;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) {
			if (!quiet_missing)
				fprintf(stderr, "balanced: lo: SIOCSIFFLAGS: %s\n",
					strerror(errno));
		} else if (!quiet_missing) {
			fprintf(stderr, "balanced: brought lo up (better done "
				"before recording: its routes outlive this run)\n");
		}
	}
	close(s);
}

static void pair_exchange(int a, int b, const char *what)
{
	char buf[256];

	if (send(a, what, strlen(what), MSG_NOSIGNAL) != (ssize_t)strlen(what))
		fail("send", errno);
	if (recv(b, buf, sizeof(buf), 0) != (ssize_t)strlen(what))
		fail("recv", errno);
	if (send(b, what, strlen(what), MSG_NOSIGNAL) != (ssize_t)strlen(what))
		fail("send", errno);
	if (recv(a, buf, sizeof(buf), 0) != (ssize_t)strlen(what))
		fail("recv", errno);
}

static int ex_unix(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	socklen_t len;
	int sv[2], l, c, a;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return skip_or_fail("socketpair(AF_UNIX)", errno, 0);
	pair_exchange(sv[0], sv[1], "unix stream");
	xclose(sv[0]);
	xclose(sv[1]);

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		fail("socketpair(SOCK_DGRAM)", errno);
	pair_exchange(sv[0], sv[1], "unix dgram");
	xclose(sv[0]);
	xclose(sv[1]);

	/* A listener on an abstract name: nothing in the filesystem. */
	len = offsetof(struct sockaddr_un, sun_path) + 1 +
	      snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1,
		       "balanced-%d", (int)main_pid);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		fail("socket(AF_UNIX)", errno);
	if (bind(l, (struct sockaddr *)&sun, len) < 0)
		fail("bind(abstract)", errno);
	if (listen(l, 1) < 0)
		fail("listen", errno);
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0)
		fail("socket(AF_UNIX)", errno);
	if (connect(c, (struct sockaddr *)&sun, len) < 0)
		fail("connect", errno);
	a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (a < 0)
		fail("accept4", errno);
	pair_exchange(c, a, "unix listener");
	xclose(c);
	xclose(a);
	xclose(l);
	return 0;
}

static int ex_tcp(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	socklen_t len = sizeof(sin);
	int l, c, a;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return skip_or_fail("socket(AF_INET, SOCK_STREAM)", errno, 0);
	if (bind(l, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		fail("bind", errno);
	if (listen(l, 1) < 0)
		fail("listen", errno);
	if (getsockname(l, (struct sockaddr *)&sin, &len) < 0)
		fail("getsockname", errno);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0)
		fail("socket", errno);
	if (connect(c, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		fail("connect 127.0.0.1", errno);
	a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (a < 0)
		fail("accept4", errno);
	pair_exchange(c, a, "tcp over loopback");
	/*
	 * An orderly close leaves the first closer in TIME_WAIT for 60 s: a
	 * live tcp_timewait_sock at the end of a short recording.  Closing
	 * with a zero linger resets the connection instead, so both ends are
	 * gone when this returns.
	 */
	if (setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) < 0)
		fail("setsockopt(SO_LINGER)", errno);
	xclose(c);
	xclose(a);
	xclose(l);
	return 0;
}

static int ex_udp(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET }, sb, from;
	socklen_t len = sizeof(sa), flen = sizeof(from);
	char buf[64];
	int a, b;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sb = sa;
	a = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (a < 0)
		return skip_or_fail("socket(AF_INET, SOCK_DGRAM)", errno, 0);
	b = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (b < 0)
		fail("socket", errno);
	if (bind(a, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    bind(b, (struct sockaddr *)&sb, sizeof(sb)) < 0)
		fail("bind", errno);
	if (getsockname(b, (struct sockaddr *)&sb, &len) < 0)
		fail("getsockname", errno);
	if (sendto(a, "udp", 3, 0, (struct sockaddr *)&sb, sizeof(sb)) != 3)
		fail("sendto", errno);
	if (recvfrom(b, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen) != 3)
		fail("recvfrom", errno);
	if (sendto(b, "ack", 3, 0, (struct sockaddr *)&from, flen) != 3)
		fail("sendto", errno);
	if (recv(a, buf, sizeof(buf), 0) != 3)
		fail("recv", errno);
	xclose(a);
	xclose(b);
	return 0;
}

/* ------------------------------------------------------------------ */
/* memory                                                             */

static int ex_memfd(void)
{
	const size_t sz = 64 * 1024;
	char *p;
	int fd;

	fd = memfd_create("balanced", MFD_CLOEXEC);
	if (fd < 0)
		return skip_or_fail("memfd_create", errno, 0);
	if (ftruncate(fd, sz) < 0)
		fail("ftruncate", errno);
	p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		fail("mmap(memfd)", errno);
	memset(p, 'm', sz);
	if (munmap(p, sz) < 0)
		fail("munmap", errno);
	xclose(fd);
	return 0;
}

static int ex_mmap(void)
{
	const size_t sz = 1024 * 1024;
	char *p;

	p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fail("mmap(anonymous)", errno);
	memset(p, 'z', sz);
	if (madvise(p, sz, MADV_DONTNEED) < 0)
		fail("madvise(MADV_DONTNEED)", errno);
	if (p[sz / 2] != 0)
		failx("madvise: page not zero after MADV_DONTNEED");
	if (mprotect(p, sz / 2, PROT_READ) < 0)	/* splits the VMA */
		fail("mprotect", errno);
	if (munmap(p, sz) < 0)
		fail("munmap", errno);
	return 0;
}

/* ------------------------------------------------------------------ */

static struct exercise exercises[] = {
	{ .name = "fork-exec", .fn = ex_fork_exec },
	{ .name = "spawn", .fn = ex_spawn },
	{ .name = "threads", .fn = ex_threads },
	{ .name = "pipe", .fn = ex_pipe },
	{ .name = "files", .fn = ex_files },
	{ .name = "ns-uts-ipc", .fn = ex_ns_uts_ipc },
	{ .name = "ns-net", .fn = ex_ns_net },
	{ .name = "ns-mnt", .fn = ex_ns_mnt },
	{ .name = "ns-pid", .fn = ex_ns_pid },
	{ .name = "keys", .fn = ex_keys },
	{ .name = "inotify", .fn = ex_inotify },
	{ .name = "timerfd", .fn = ex_timerfd },
	{ .name = "posix-timer", .fn = ex_posix_timer },
	{ .name = "itimer", .fn = ex_itimer },
	{ .name = "eventfd", .fn = ex_eventfd },
	{ .name = "signalfd", .fn = ex_signalfd },
	{ .name = "epoll", .fn = ex_epoll },
	{ .name = "sysv-msg", .fn = ex_sysv_msg },
	{ .name = "sysv-sem", .fn = ex_sysv_sem },
	{ .name = "sysv-shm", .fn = ex_sysv_shm },
	{ .name = "mqueue", .fn = ex_mqueue },
	{ .name = "aio", .fn = ex_aio },
	{ .name = "unix", .fn = ex_unix },
	{ .name = "tcp", .fn = ex_tcp },
	{ .name = "udp", .fn = ex_udp },
	{ .name = "memfd", .fn = ex_memfd },
	{ .name = "mmap", .fn = ex_mmap },
};
#define NEX (sizeof(exercises) / sizeof(exercises[0]))

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void pick_exec(const char *argv0)
{
	static char self[4096];
	ssize_t n;

	if (access("/bin/true", X_OK) == 0) {
		exec_path = "/bin/true";
		exec_argv[0] = "true";
	} else if (access("/bin/busybox", X_OK) == 0) {
		exec_path = "/bin/busybox";
		exec_argv[0] = "busybox";
		exec_argv[1] = "true";
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n > 0) {
			self[n] = 0;
			exec_path = self;
		} else {
			exec_path = argv0;
		}
		exec_argv[0] = "balanced";
		exec_argv[1] = "--noop";
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: balanced [-t SECONDS] [-s SETTLE] [-v]\n"
		"  -t  run the exercises this long (default 20 s)\n"
		"  -s  then stay idle this long, so deferred frees (RCU, work\n"
		"      queues) happen before exit (default 2 s, 0 for none)\n"
		"  -v  per-exercise counts\n");
	exit(2);
}

static double parse_secs(const char *s, int zero_ok)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || (!zero_ok && v == 0) || v > 1e6)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	double secs = 20, settle = 2, start, deadline, elapsed;
	unsigned long iterations = 0;
	struct sigaction sa;
	size_t i, active, skipped;
	const char *t;
	int opt;

	if (argc == 2 && !strcmp(argv[1], "--noop"))
		return 0;
	while ((opt = getopt(argc, argv, "t:s:vh")) != -1) {
		switch (opt) {
		case 't':
			secs = parse_secs(optarg, 0);
			break;
		case 's':
			settle = parse_secs(optarg, 1);
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	main_pid = getpid();
	t = getenv("TMPDIR");
	if (t && *t && strlen(t) < 200)
		tmpdir = t;
	tmp_path(p_fs, sizeof(p_fs), "files");
	tmp_path(p_inotify, sizeof(p_inotify), "inotify");
	tmp_path(p_aio, sizeof(p_aio), "aio");
	tmp_path(p_mnt, sizeof(p_mnt), "mnt");
	snprintf(mq_name, sizeof(mq_name), "/balanced-%d", (int)main_pid);
	pick_exec(argv[0]);

	/* SIGUSR1 for signalfd, SIGALRM for the itimer: taken synchronously. */
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGUSR1);
	sigaddset(&blocked, SIGALRM);
	if (sigprocmask(SIG_BLOCK, &blocked, NULL) < 0)
		fail("sigprocmask", errno);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = SIG_DFL;	/* waitpid needs SIGCHLD not ignored */
	sigaction(SIGCHLD, &sa, NULL);

	/*
	 * TCP and UDP need a loopback.  Bringing it up creates addresses and
	 * routes that stay, so the guest should do it before recording.
	 */
	lo_up(0);

	start = now();
	deadline = start + secs;
	for (;;) {
		double t0;
		int done = 0, r;

		active = 0;
		for (i = 0; i < NEX; i++) {
			struct exercise *ex = &exercises[i];

			if (ex->skipped)
				continue;
			if (stop || now() >= deadline) {
				done = 1;
				break;
			}
			cur = ex;
			t0 = now();
			r = ex->fn();
			ex->secs += now() - t0;
			if (r == 0) {
				ex->count++;
				ex->ok_once = 1;
				active++;
			}
			cur = NULL;
		}
		if (done || !active)
			break;
		iterations++;
	}
	elapsed = now() - start;

	active = skipped = 0;
	for (i = 0; i < NEX; i++) {
		if (exercises[i].skipped)
			skipped++;
		else
			active++;
	}
	if (settle > 0 && !stop) {
		struct timespec ts = { (time_t)settle,
				       (long)((settle - (time_t)settle) * 1e9) };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop)
			;
	}
	printf("balanced: %lu iterations in %.1f s (%zu exercises, %zu skipped)\n",
	       iterations, elapsed, active, skipped);
	if (verbose) {
		for (i = 0; i < NEX; i++) {
			if (exercises[i].skipped)
				printf("balanced:   %-12s skipped\n", exercises[i].name);
			else
				printf("balanced:   %-12s %8lu  %8.3f ms each\n",
				       exercises[i].name, exercises[i].count,
				       exercises[i].count ? 1e3 * exercises[i].secs /
				       exercises[i].count : 0.0);
		}
	}
	return 0;
}
