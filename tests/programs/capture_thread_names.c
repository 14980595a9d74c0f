/* capture_thread_names.c - prints the names of its process's threads once MPI is up.
 *
 * Why: the capture's writer thread is named (encore-writer) so that perf and top tell it from
 * the rank's own thread; a recorded run lists it, a plain run does not.
 *
 * Usage: test_capture_thread_names        (any number of ranks; each prints one line)
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char line[4096] = "";
  DIR* tasks = opendir("/proc/self/task");
  for (struct dirent* t; tasks && (t = readdir(tasks)) != NULL;) {
    if (t->d_name[0] == '.') continue;
    char path[300], name[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", t->d_name);
    FILE* f = fopen(path, "r");
    if (f && fgets(name, sizeof name, f)) name[strcspn(name, "\n")] = '\0';
    if (f) fclose(f);
    if (strlen(line) + strlen(name) + 2 < sizeof line) {
      strcat(line, " ");
      strcat(line, name);
    }
  }
  if (tasks) closedir(tasks);
  printf("threads rank=%d:%s\n", rank, line);
  MPI_Finalize();
  return 0;
}
