/* pread then pwrite, against pread then copy_file_range, of the same runs of SRC into DST
 * (length set first), by run size 4 KiB-1 MiB, until fdatasync; 3 rounds (docs/copy.md,
 * "Closing the gaps to cp"). Build and run: gcc -O2 -o /tmp/cfr_vs_pwrite bench/micro/cfr_vs_pwrite.c
 * && /tmp/cfr_vs_pwrite SRC DST MIB   (SRC: MIB MiB of random data on the filesystem under test) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
#include <string.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int argc,char**argv){
  const char*src=argv[1],*dst=argv[2]; long total=atol(argv[3])<<20;
  long sizes[]={4096,16384,65536,262144,1048576};
  char*buf=aligned_alloc(4096,1<<20);
  for(int round=0;round<3;round++)
  for(int i=0;i<5;i++){ long S=sizes[i]; double t[2];
   for(int m=0;m<2;m++){
    int s=open(src,O_RDONLY), d=open(dst,O_WRONLY|O_CREAT|O_TRUNC,0644);
    ftruncate(d,total);
    double a=now();
    for(long off=0;off<total;off+=S){
      pread(s,buf,S,off); /* both read for the scan */
      if(m==0){ pwrite(d,buf,S,off);} else { loff_t x=off,y=off; copy_file_range(s,&x,d,&y,S,0);} }
    fdatasync(d);
    t[m]=now()-a; close(s); close(d); unlink(dst);}
   printf("round %d run %7ld: pwrite %.3f s  copy_file_range %.3f s  cfr/pwrite %.2f\n",round,S,t[0],t[1],t[1]/t[0]);}
}
