/* pread of 128 KiB pieces of a file into a buffer at a page boundary + 0, 16 and 2048 bytes,
 * 3 rounds: does the destination's alignment change the kernel's copy? (docs/copy.md,
 * "Closing the gaps to cp"). Build and run: gcc -O2 -o /tmp/align_read bench/micro/align_read.c &&
 * /tmp/align_read /mnt/tmpfs/FILE  (FILE: at least 256 MiB, e.g. from /dev/urandom) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int c,char**v){ int fd=open(v[1],O_RDONLY); char*b=aligned_alloc(4096,(1<<20)+8192);
 for(int r=0;r<3;r++) for(int o=0;o<3;o++){ int off=o==0?0:o==1?16:2048; double a=now();
  for(long p=0;p<(256l<<20);p+=131072) pread(fd,b+off,131072,p);
  printf("offset %4d: %.1f ms\n",off,(now()-a)*1000);} }
