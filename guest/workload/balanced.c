// SPDX-License-Identifier: GPL-2.0
/*
 * balanced: a real, balanced workload for perf refleak's "no false leak"
 * check.  It loops over a list of exercises (process, file, IPC, timer,
 * socket, namespace, key ... syscalls) until the time is up; every exercise
 * destroys every object it creates before it returns, so a recording of this
 * program must show no leak.  A feature the kernel lacks is skipped (once,
 * on stderr); any other failure exits 1 so a broken workload is noticed.
 * With -H, a holder process keeps objects of the same kinds alive, as a
 * service would, until after the recording ends: they must not be called
 * leaked either.
 *
 * Build: gcc -static -O2 -Wall -Wextra -o balanced balanced.c
 * Usage: balanced [-t SECONDS] [-s SETTLE] [-H] [-v]
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
#include <poll.h>
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
#include <sys/prctl.h>
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
static int in_holder;		/* the -H holder process */
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

static void hold_release(void);

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
	if (in_holder)
		hold_release();
	if (in_child || in_holder)
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
/* -H: a holder that keeps objects alive past the recording           */

/*
 * A service running next to the exercises: a process forked at the start
 * that legitimately keeps objects of the kinds the exercises create and
 * destroy (so the same allocation stacks have short-lived siblings) until
 * after the recording ends.  perf refleak record stops --settle seconds
 * after balanced exits; the holder sees balanced exit (its pipe closes),
 * keeps everything HOLD_LINGER seconds more, then lets go and exits.  A
 * report must call none of it leaked: its process is alive at the end.
 */
#define HOLD_LINGER	10	/* s after balanced's exit: past perf's --settle */
#define HOLD_TICK	3	/* s between two requests closed in order */
#define HOLD_POOL_TICK	0.5	/* s between two connections the pool grows by */
#define HOLD_POOL0	4	/* pool connections open from the start */
#define HOLD_POOL_MAX	12	/* ... and once it has warmed up (after 4 s) */
#define HOLD_BUSY	2	/* connections nobody accepts */
#define HOLD_FILES	20	/* files and UDP sockets kept, half of them dup()ed */

static struct exercise holder_ex = { .name = "holder" };
static pid_t holder_pid;	/* in balanced: the holder, 0 without -H */
static char p_hold[256];

static struct {
	struct sockaddr_in addr;	/* the server's listener */
	int lfd;			/* the listener, -1 without TCP */
	int pool[HOLD_POOL_MAX][2];	/* client end, accepted end */
	int npool;
	unsigned long timewait;		/* connections closed in order */
	int ns_sk;			/* the netns child's lifeline, or -1 */
	pid_t ns_pid;
} hold = { .lfd = -1, .ns_sk = -1 };

/* A part of the holder the kernel lacks: say so and go on without it. */
static void hold_missing(const char *part, const char *call, int err,
			 unsigned int extra)
{
	if (!is_missing(err, extra))
		fail(call, err);
	fprintf(stderr, "balanced: holder: skipping %s: %s: %s\n", part, call,
		strerror(err));
	if (in_child)
		_exit(CHILD_SKIPPED);
}

/* A TCP listener on @ip, port chosen by the kernel; -1 without TCP. */
static int tcp_listen(in_addr_t ip, int backlog, struct sockaddr_in *sin)
{
	socklen_t len = sizeof(*sin);
	int l;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(ip);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -1;
	if (bind(l, (struct sockaddr *)sin, sizeof(*sin)) < 0)
		fail("bind", errno);
	if (listen(l, backlog) < 0)
		fail("listen", errno);
	if (getsockname(l, (struct sockaddr *)sin, &len) < 0)
		fail("getsockname", errno);
	return l;
}

/* A connection to listener @l at @sin: both ends, after one exchange. */
static void tcp_pair(int l, const struct sockaddr_in *sin, int *c, int *a,
		     const char *what)
{
	*c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*c < 0)
		fail("socket", errno);
	if (connect(*c, (const struct sockaddr *)sin, sizeof(*sin)) < 0)
		fail("connect", errno);
	*a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (*a < 0)
		fail("accept4", errno);
	pair_exchange(*c, *a, what);
}

/*
 * One more kept connection: the server's pool warms up during the first
 * seconds, then stays as it is (a pool that grew through the whole
 * recording could not be told from a leak by its life cycle, see
 * perf-refleak.txt).  The client end comes from socket(), the accepted end from the
 * listener in softirq (the handshake's last ACK), as in the tcp exercise.
 * Every other one keeps a request the server has not read yet.
 */
static void hold_grow(void)
{
	int *p = hold.pool[hold.npool];

	tcp_pair(hold.lfd, &hold.addr, &p[0], &p[1], "holder pool");
	if (hold.npool & 1)
		xwrite(p[0], "pending", 7, "write");
	hold.npool++;
}

/*
 * A short request closed in the orderly way, client first: the kernel
 * turns the client end into a tcp_timewait_sock (from softirq or the
 * socket's backlog) that its timer frees 60 s later, after the recording
 * and after the holder.  The tcp exercise resets instead and leaves none.
 */
static void hold_timewait(void)
{
	char buf[8];
	int c, a;

	tcp_pair(hold.lfd, &hold.addr, &c, &a, "holder request");
	xclose(c);
	if (read(a, buf, sizeof(buf)) != 0)	/* the client's FIN */
		failx("time-wait: no EOF on the server end");
	xclose(a);
	hold.timewait++;
}

/*
 * The namespace child: new net, UTS and IPC namespaces, kept until the
 * holder closes @sk.  In them: lo up (its addresses and routes), a SysV
 * queue with a message in it, and a connection from 127.0.0.3 to a
 * listener on 127.0.0.2.  The listener's SYN-ACK made the kernel create,
 * in softirq, the neighbour entry of 127.0.0.3 and the input route it
 * keeps; connect() made those of 127.0.0.2.  It all goes with the
 * namespaces when the child exits (net cleanup runs in a kworker): nothing
 * is added to the initial namespaces.
 */
static void __attribute__((noreturn)) hold_ns_child(int sk)
{
	struct { long mtype; char mtext[16]; } m = { 1, "held in ipc-ns" };
	struct sockaddr_in srv, cli = { .sin_family = AF_INET };
	int l, c, a, id;
	char ch;

	prctl(PR_SET_NAME, "balanced-netns");
	if (unshare(CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC) < 0)
		hold_missing("namespaces", "unshare(CLONE_NEWNET|CLONE_NEWUTS|CLONE_NEWIPC)",
			     errno, SK_PERM);
	if (sethostname("balanced-hold", 13) < 0)
		fail("sethostname", errno);
	id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (id >= 0 && msgsnd(id, &m, sizeof(m.mtext), IPC_NOWAIT) < 0)
		fail("msgsnd", errno);
	lo_up(1);
	l = tcp_listen(INADDR_LOOPBACK + 1, 4, &srv);
	if (l >= 0) {
		cli.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 2);
		c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c < 0)
			fail("socket", errno);
		if (bind(c, (struct sockaddr *)&cli, sizeof(cli)) < 0)
			fail("bind 127.0.0.3", errno);
		if (connect(c, (struct sockaddr *)&srv, sizeof(srv)) < 0)
			fail("connect 127.0.0.2", errno);
		a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (a < 0)
			fail("accept4", errno);
		pair_exchange(c, a, "holder netns");
	}
	xwrite(sk, "r", 1, "write");
	while (read(sk, &ch, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* Forks the namespace child (first, so it inherits nothing else). */
static void hold_ns_start(int life, int ready)
{
	ssize_t n;
	int sv[2], st;
	char ch;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		fail("socketpair", errno);
	fflush(NULL);
	hold.ns_pid = fork();
	if (hold.ns_pid < 0)
		fail("fork", errno);
	if (hold.ns_pid == 0) {
		in_child = 1;
		in_holder = 0;
		close(life);
		close(ready);
		close(sv[0]);
		hold_ns_child(sv[1]);
	}
	xclose(sv[1]);
	do
		n = read(sv[0], &ch, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1) {
		hold.ns_sk = sv[0];
		return;
	}
	xclose(sv[0]);
	if (waitpid(hold.ns_pid, &st, 0) < 0)
		fail("waitpid", errno);
	if (WIFEXITED(st) && WEXITSTATUS(st) == CHILD_SKIPPED)
		return;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
		die_exit();	/* the child said why */
	failx("namespace child: status 0x%x", st);
}

/* A queued message on @fd that carries @pass (SCM_RIGHTS). */
static void send_fd(int fd, int pass)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char data[] = "fd";
	struct iovec iov = { .iov_base = data, .iov_len = 2 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	memset(&u, 0, sizeof(u));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &pass, sizeof(int));
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) != 2)
		fail("sendmsg(SCM_RIGHTS)", errno);
}

/*
 * Everything the holder keeps from the start.  Descriptors are left open
 * on purpose: the holder's exit closes them.
 */
static void hold_setup(int life, int ready, double secs, double settle)
{
	struct itimerspec hour = { .it_value = { 3600, 0 } };
	struct itimerspec every = { .it_value = { 1, 0 }, .it_interval = { 1, 0 } };
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	unsigned int timeout = secs + settle + HOLD_LINGER + 60;
	struct sockaddr_in busy;
	char sub[300], msg[16];
	int i, l, c, fd, ifd, sv[2], p[2];
	const char *s;
	sigset_t usr2;
	timer_t t;
	long key;

	/* A child keeping new net, UTS and IPC namespaces (see above). */
	hold_ns_start(life, ready);

	/*
	 * A TCP server on 127.0.0.1: HOLD_POOL0 accepted connections and
	 * their client ends, open from the start (up to HOLD_POOL_MAX as
	 * the pool warms up), one request closed in order (a TIME_WAIT
	 * socket, another every HOLD_TICK s), and a second
	 * listener with HOLD_BUSY connections in its accept queue that
	 * nobody accepts: a busy server.  The kernel made those sockets in
	 * softirq and keeps them, each with the request the client sent.
	 */
	hold.lfd = tcp_listen(INADDR_LOOPBACK, HOLD_POOL_MAX + 4, &hold.addr);
	if (hold.lfd < 0) {
		hold_missing("tcp", "socket(AF_INET, SOCK_STREAM)", errno, 0);
	} else {
		for (i = 0; i < HOLD_POOL0; i++)
			hold_grow();
		hold_timewait();
		l = tcp_listen(INADDR_LOOPBACK, HOLD_BUSY + 2, &busy);
		if (l < 0)
			fail("socket", errno);
		for (i = 0; i < HOLD_BUSY; i++) {
			c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (c < 0)
				fail("socket", errno);
			if (connect(c, (struct sockaddr *)&busy, sizeof(busy)) < 0)
				fail("connect", errno);
			xwrite(c, "hello", 5, "write");
		}
	}

	/*
	 * An AF_UNIX pair whose reader is slow: three messages queued, and
	 * a fourth carrying a pipe (SCM_RIGHTS) that only the queued message
	 * still holds, with data in it.  Not a cycle: unix_gc has no part.
	 */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		hold_missing("unix", "socketpair(AF_UNIX)", errno, 0);
	} else {
		for (i = 0; i < 3; i++) {
			snprintf(msg, sizeof(msg), "queued %d", i);
			if (send(sv[0], msg, strlen(msg), MSG_NOSIGNAL) < 0)
				fail("send", errno);
		}
		if (pipe2(p, O_CLOEXEC) < 0)
			fail("pipe2", errno);
		xwrite(p[1], "in flight", 9, "write pipe");
		send_fd(sv[0], p[0]);
		xclose(p[0]);
		xclose(p[1]);
	}

	/*
	 * inotify watches on a scratch directory and three subdirectories
	 * (a config watcher): nothing happens in them, the marks just stay.
	 */
	ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ifd < 0) {
		hold_missing("inotify", "inotify_init1", errno, 0);
	} else {
		if (mkdir(p_hold, 0700) < 0)
			fail("mkdir", errno);
		if (inotify_add_watch(ifd, p_hold, IN_CREATE | IN_DELETE) < 0)
			fail("inotify_add_watch", errno);
		for (s = "abc"; *s; s++) {
			snprintf(sub, sizeof(sub), "%s/%c", p_hold, *s);
			if (mkdir(sub, 0700) < 0)
				fail("mkdir", errno);
			if (inotify_add_watch(ifd, sub, IN_CREATE | IN_DELETE |
					      IN_MODIFY) < 0)
				fail("inotify_add_watch", errno);
		}
	}

	/*
	 * Armed POSIX timers: a one-shot an hour away (SIGEV_NONE), and a
	 * periodic one every second whose signal stays blocked, so its
	 * preallocated sigqueue sits pending and the rest count as overruns.
	 */
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) < 0) {
		hold_missing("posix timers", "timer_create", errno, 0);
	} else {
		if (timer_settime(t, 0, &hour, NULL) < 0)
			fail("timer_settime", errno);
		sigemptyset(&usr2);
		sigaddset(&usr2, SIGUSR2);
		if (sigprocmask(SIG_BLOCK, &usr2, NULL) < 0)
			fail("sigprocmask", errno);
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = SIGUSR2;
		if (timer_create(CLOCK_MONOTONIC, &sev, &t) < 0)
			fail("timer_create(SIGEV_SIGNAL)", errno);
		if (timer_settime(t, 0, &every, NULL) < 0)
			fail("timer_settime", errno);
	}

	/* Armed timerfds: one ticking every second, never read; one an hour away. */
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0) {
		hold_missing("timerfd", "timerfd_create", errno, 0);
	} else {
		if (timerfd_settime(fd, 0, &every, NULL) < 0)
			fail("timerfd_settime", errno);
		fd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC);
		if (fd < 0)
			fail("timerfd_create(CLOCK_BOOTTIME)", errno);
		if (timerfd_settime(fd, 0, &hour, NULL) < 0)
			fail("timerfd_settime", errno);
	}

	/*
	 * Files and UDP sockets kept open for the holder's life, as a
	 * service keeps its logs and its sockets, while the exercises open
	 * and close others at the same stacks: half of each moved to
	 * another descriptor (dup(), the first one closed, as a
	 * redirection leaves them), so that the put that ends the others,
	 * close(), came to them too.
	 */
	for (i = 0; i < HOLD_FILES; i++) {
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			fail("open /dev/null", errno);
		c = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (c < 0)
			fail("socket(AF_INET, SOCK_DGRAM)", errno);
		if (i % 2)
			continue;
		if (fcntl(fd, F_DUPFD_CLOEXEC, 0) < 0 || fcntl(c, F_DUPFD_CLOEXEC, 0) < 0)
			fail("fcntl(F_DUPFD_CLOEXEC)", errno);
		xclose(fd);
		xclose(c);
	}

	/*
	 * A key with a timeout past the end, in a session keyring of the
	 * holder's own (a credential cache): the key GC would remove it when
	 * it expires; the holder's exit drops the keyring and the key first.
	 */
	if (syscall(__NR_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0) {
		hold_missing("keys", "keyctl(JOIN_SESSION_KEYRING)", errno, SK_PERM);
	} else {
		key = syscall(__NR_add_key, "user", "balanced:hold", "held", 4,
			      KEY_SPEC_SESSION_KEYRING);
		if (key < 0)
			fail("add_key", errno);
		if (syscall(__NR_keyctl, KEYCTL_SET_TIMEOUT, key, timeout) < 0)
			fail("keyctl(SET_TIMEOUT)", errno);
	}
}

/* Ends the holder: the namespace child first, then the scratch directory. */
static void hold_release(void)
{
	char sub[300];
	const char *s;
	int st;

	if (hold.ns_sk >= 0) {
		close(hold.ns_sk);	/* the child reads EOF and exits */
		hold.ns_sk = -1;
		while (waitpid(hold.ns_pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	for (s = "abc"; *s; s++) {
		snprintf(sub, sizeof(sub), "%s/%c", p_hold, *s);
		rmdir(sub);
	}
	rmdir(p_hold);
}

/*
 * The holder's life: every HOLD_POOL_TICK s one more pool connection until
 * the pool is full, every HOLD_TICK s while balanced runs one more request
 * closed in order; once balanced has
 * exited (EOF on @life), HOLD_LINGER s more; then release and exit.  It
 * also ends on SIGINT/SIGTERM, and at the latest when balanced should
 * have exited HOLD_LINGER + 30 s ago, whatever holds the pipe open.
 */
static void __attribute__((noreturn)) hold_run(int life, double secs, double settle)
{
	double t = now(), end = t + secs + settle + HOLD_LINGER + 30;
	double next = t + HOLD_TICK, next_pool = t + HOLD_POOL_TICK;
	int gone = 0;

	while (!stop && (t = now()) < end) {
		struct pollfd pfd = { .fd = life, .events = POLLIN };
		int growing = hold.lfd >= 0 && hold.npool < HOLD_POOL_MAX;
		double tick = growing && next_pool < next ? next_pool : next;
		double until = gone || end < tick ? end : tick;
		char c;
		int n;

		if (!gone && growing && t >= next_pool) {
			hold_grow();
			next_pool += HOLD_POOL_TICK;
			continue;
		}
		if (!gone && t >= next) {
			if (hold.lfd >= 0)
				hold_timewait();
			next += HOLD_TICK;
			continue;
		}
		n = poll(&pfd, !gone, (int)((until - t) * 1e3) + 1);
		if (n < 0 && errno != EINTR)
			fail("poll", errno);
		if (n > 0 && read(life, &c, 1) <= 0) {
			/* balanced has exited: perf stops --settle s later */
			gone = 1;
			close(life);
			if (now() + HOLD_LINGER < end)
				end = now() + HOLD_LINGER;
		}
	}
	if (verbose)
		fprintf(stderr, "balanced: holder: %d connections kept, %lu "
			"closed in order; releasing\n", hold.npool, hold.timewait);
	hold_release();
	_exit(0);
}

/* The holder process: sets up, tells balanced through @ready, holds. */
static void __attribute__((noreturn)) hold_main(int life, int ready,
						double secs, double settle)
{
	int fd;

	prctl(PR_SET_NAME, "balanced-hold");
	/*
	 * It outlives balanced: stdin and stdout to /dev/null, so that a
	 * pipe reading balanced's output ends with balanced.  stderr stays.
	 */
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		close(fd);
	}
	hold_setup(life, ready, secs, settle);
	xwrite(ready, "r", 1, "write");
	xclose(ready);
	hold_run(life, secs, settle);
}

/* Forks the holder and waits until it holds everything. */
static void hold_start(double secs, double settle)
{
	int life[2], ready[2], st;
	ssize_t n;
	char ch;

	tmp_path(p_hold, sizeof(p_hold), "hold");
	if (pipe2(life, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0)
		fail("pipe2", errno);
	fflush(NULL);
	holder_pid = fork();
	if (holder_pid < 0)
		fail("fork", errno);
	if (holder_pid == 0) {
		in_holder = 1;
		cur = &holder_ex;
		close(life[1]);
		close(ready[0]);
		hold_main(life[0], ready[1], secs, settle);
	}
	/* life[1] stays open: the holder reads EOF when balanced exits. */
	xclose(life[0]);
	xclose(ready[1]);
	do
		n = read(ready[0], &ch, 1);
	while (n < 0 && errno == EINTR);
	xclose(ready[0]);
	if (n == 1)
		return;
	if (waitpid(holder_pid, &st, 0) < 0)
		fail("waitpid", errno);
	holder_pid = 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
		die_exit();	/* the holder said why */
	failx("holder: status 0x%x", st);
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
	fprintf(stderr, "usage: balanced [-t SECONDS] [-s SETTLE] [-H] [-v]\n"
		"  -t  run the exercises this long (default 20 s)\n"
		"  -s  then stay idle this long, so deferred frees (RCU, work\n"
		"      queues) happen before exit (default 2 s, 0 for none)\n"
		"  -H  also fork a holder that keeps sockets, namespaces, timers,\n"
		"      watches and a key alive until %d s after balanced exits\n"
		"  -v  per-exercise counts\n", HOLD_LINGER);
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
	int opt, holders = 0;

	if (argc == 2 && !strcmp(argv[1], "--noop"))
		return 0;
	while ((opt = getopt(argc, argv, "t:s:Hvh")) != -1) {
		switch (opt) {
		case 't':
			secs = parse_secs(optarg, 0);
			break;
		case 's':
			settle = parse_secs(optarg, 1);
			break;
		case 'H':
			holders = 1;
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
	if (holders)
		hold_start(secs, settle);

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
	if (holder_pid) {
		/* The holder outlives balanced; it must still be there now. */
		int st;

		if (waitpid(holder_pid, &st, WNOHANG) == holder_pid) {
			if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
				die_exit();	/* it said why */
			if (!stop || !WIFEXITED(st) || WEXITSTATUS(st))
				failx("holder: ended early, status 0x%x", st);
		} else if (!stop) {
			printf("balanced: holder %d keeps its objects until %d s "
			       "after this exit\n", (int)holder_pid, HOLD_LINGER);
		}
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
