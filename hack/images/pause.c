/*
 * pause: the process that holds a pod sandbox's namespaces open.
 *
 * It sleeps in pause() until a signal arrives. As PID 1 of a pod's PID
 * namespace it reaps every child that exits (SIGCHLD), so no zombie
 * accumulates, and it exits 0 on SIGTERM or SIGINT so that stopping the
 * sandbox is immediate. Built with `gcc -static` by hack/build-images.sh.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig)
{
	(void)sig;
	_exit(0);
}

static void on_child(int sig)
{
	int saved = errno;

	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved;
}

static int handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

int main(void)
{
	static const char msg[] = "pause: cannot install signal handlers\n";

	if (handle(SIGTERM, on_stop, 0) != 0 || handle(SIGINT, on_stop, 0) != 0 ||
	    handle(SIGCHLD, on_child, SA_NOCLDSTOP | SA_RESTART) != 0) {
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			return 1;
		return 1;
	}
	/* Reap children that exited before the handler was installed. */
	on_child(SIGCHLD);
	for (;;)
		pause();
}
