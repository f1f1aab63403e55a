/* Run the test's own executable again as a child process (a case that must
 * crash, abort or hang runs there, and the parent checks how it ended):
 * argv[0] names it for the messages, the others are its arguments; env_name,
 * when not NULL, is set to env_value in the child only. The child's stderr
 * is collected into out (cap bytes with the final NUL); the return value is
 * its wait status. Any failure to set the child up ends the test (status 1). */
#ifndef HERD_TESTS_CHILD_H
#define HERD_TESTS_CHILD_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static inline int check_run_self(char *const argv[], const char *env_name, const char *env_value,
                                 char *out, size_t cap) {
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        perror("check_run_self: pipe");
        _exit(1);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("check_run_self: fork");
        _exit(1);
    }
    if (pid == 0) {
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        close(pipefd[1]);
        if (env_name)
            setenv(env_name, env_value, 1);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(pipefd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(pipefd[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(pipefd[0]);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) {
        perror("check_run_self: waitpid");
        _exit(1);
    }
    return status;
}

/* Print how the child `which` ended (its stderr, then its exit status if
 * it exited) and answer whether it died of signal sig. */
static inline int check_child_died_of(const char *which, int status, const char *out, int sig) {
    printf("child '%s' stderr:\n%s", which, out);
    if (WIFEXITED(status))
        printf("child '%s' exited with %d\n", which, WEXITSTATUS(status));
    return WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

#endif
