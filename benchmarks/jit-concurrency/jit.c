// Do two threads' cuModuleLoadData calls run at once? Times N loads of a PTX module in
// series and then N at once from N threads (entries renamed so nothing is reused).
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static CUcontext ctx;
static char *ptx;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static char *renamed(int k){ // replace the entry name's first letter run with a unique suffix
  char *s=strdup(ptx); char *e=strstr(s,".entry "); if(!e) return s; e+=7;
  char tag[8]; snprintf(tag,8,"%c%c%c",'a'+k%26,'a'+(k/26)%26,'a'+(k/676)%26); memcpy(e,tag,3); return s;}
static int counter=0; static pthread_mutex_t m=PTHREAD_MUTEX_INITIALIZER;
static void *one(void *arg){ cuCtxSetCurrent(ctx); pthread_mutex_lock(&m); int k=counter++; pthread_mutex_unlock(&m);
  char *s=renamed(k); CUmodule mod; double t=now(); CUresult r=cuModuleLoadData(&mod,s);
  double *out=(double*)arg; *out=now()-t; if(r) printf("load failed %d\n",r); free(s); return 0;}
int main(int argc,char**argv){
  FILE*f=fopen(argv[1],"rb"); fseek(f,0,2); long n=ftell(f); rewind(f); ptx=calloc(n+1,1); fread(ptx,1,n,f); fclose(f);
  int N=atoi(argv[2]); cuInit(0); CUdevice d; cuDeviceGet(&d,0); cuDevicePrimaryCtxRetain(&ctx,d); cuCtxSetCurrent(ctx);
  double w; one(&w); // warm the JIT
  double t=now(), each[64]; for(int i=0;i<N;i++) one(&each[i]); double serial=now()-t;
  pthread_t th[64]; t=now(); for(int i=0;i<N;i++) pthread_create(&th[i],0,one,&each[i]); for(int i=0;i<N;i++) pthread_join(th[i],0);
  double par=now()-t; double mx=0; for(int i=0;i<N;i++) if(each[i]>mx) mx=each[i];
  printf("%s: %d loads in series %.1f ms (%.1f each); %d threads at once %.1f ms (slowest load %.1f ms)\n",argv[1],N,serial*1e3,serial*1e3/N,N,par*1e3,mx*1e3);
  if(argc>3){ // a small load (argv[3]) on this thread while N big loads run on others
    FILE*g=fopen(argv[3],"rb"); fseek(g,0,2); long m2=ftell(g); rewind(g); char*small=calloc(m2+1,1); fread(small,1,m2,g); fclose(g);
    CUmodule mod; double t0=now(); cuModuleLoadData(&mod,small); double alone=now()-t0;
    small[strstr(small,".entry ")-small+7]='z';
    for(int i=0;i<N;i++) pthread_create(&th[i],0,one,&each[i]);
    struct timespec sl={0,5000000}; nanosleep(&sl,0);
    small[strstr(small,".entry ")-small+8]='y';
    t0=now(); cuModuleLoadData(&mod,small); double beside=now()-t0;
    for(int i=0;i<N;i++) pthread_join(th[i],0);
    printf("small load alone %.1f ms, beside %d big loads %.1f ms\n",alone*1e3,N,beside*1e3);}
  return 0;}
