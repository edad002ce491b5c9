// Launch-latency probe: the host cost of one kernel launch and of launch +
// synchronize on an idle stream, through the CUDA runtime and driver APIs, for an empty kernel
// and one with ew_add_u64's seven parameters; beside a 1-word memset. No xehe code: the floor
// any library's one-operation latency sits on, on this machine.
// Build and run on the GPU machine:  nvcc -O2 -o /tmp/launch_probe scripts/launch_probe.cu -lcuda && /tmp/launch_probe
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#include <functional>
#include <vector>

__global__ void empty_kernel() {}
__global__ void seven(unsigned long long *o, const unsigned long long *a, const unsigned long long *b,
                      const unsigned long long *m, unsigned k, unsigned log_n, unsigned long long total)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < total) o[i] = a[i] + b[i] + m[0] + k + log_n;
}

// Spins for `cycles` clock cycles (a long kernel to test whether a parameter update waits).
__global__ void spin(long long cycles)
{
    long long t = clock64();
    while (clock64() - t < cycles) {
    }
}

static double now_us() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Median host time of `call` and of the following synchronize over 2000 pairs (200 warm-up).
static void probe(const char *name, std::function<void()> call, cudaStream_t s)
{
    std::vector<double> c, w;
    for (int i = 0; i < 2200; i++) {
        double t0 = now_us();
        call();
        double t1 = now_us();
        cudaStreamSynchronize(s);
        double t2 = now_us();
        if (i >= 200) { c.push_back(t1 - t0); w.push_back(t2 - t1); }
    }
    std::sort(c.begin(), c.end());
    std::sort(w.begin(), w.end());
    printf("| %-44s | call %6.2f | wait %6.2f | total %6.2f |\n", name, c[1000], w[1000], c[1000] + w[1000]);
}

int main()
{
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    unsigned long long *o, *a, *b, *m;
    size_t words = 2 * 3 * 8192;
    cudaMalloc(&o, 8 * words); cudaMalloc(&a, 8 * words); cudaMalloc(&b, 8 * words); cudaMalloc(&m, 8);
    cudaDeviceSynchronize();
    unsigned k = 3, log_n = 13;
    unsigned long long total = words;
    unsigned blocks = (unsigned)((words + 255) / 256);
    printf("| launch (idle stream) | host call µs | wait µs | µs |\n|---|---|---|---|\n");
    probe("runtime: cudaMemsetAsync 8 bytes", [&] { cudaMemsetAsync(m, 0, 8, s); }, s);
    probe("runtime: empty kernel <<<1,32>>>", [&] { empty_kernel<<<1, 32, 0, s>>>(); }, s);
    probe("runtime: 7-parameter kernel, N=8192 3 limbs", [&] { seven<<<blocks, 256, 0, s>>>(o, a, b, m, k, log_n, total); }, s);
    CUfunction f;
    cudaGetFuncBySymbol(&f, (const void *)seven);
    void *params[] = {&o, &a, &b, &m, &k, &log_n, &total};
    probe("driver: cuLaunchKernel, 7 parameters", [&] { cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, (CUstream)s, params, nullptr); }, s);
    struct __attribute__((packed)) { unsigned long long o, a, b, m; unsigned k, log_n; unsigned long long total; } pack = {
        (unsigned long long)o, (unsigned long long)a, (unsigned long long)b, (unsigned long long)m, k, log_n, total};
    size_t sz = sizeof pack;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pack, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz, CU_LAUNCH_PARAM_END};
    probe("driver: cuLaunchKernel, packed `extra` buffer", [&] { cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, (CUstream)s, nullptr, extra); }, s);
    // A one-node graph: the same kernel replayed by cudaGraphLaunch.
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    seven<<<blocks, 256, 0, s>>>(o, a, b, m, k, log_n, total);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&ge, g, 0);
    probe("runtime: cudaGraphLaunch of that kernel", [&] { cudaGraphLaunch(ge, s); }, s);
    // Per-launch arguments: update the instantiated node's parameters, then launch it.
    size_t nn = 1;
    cudaGraphNode_t node;
    cudaGraphGetNodes(g, &node, &nn);
    cudaKernelNodeParams kp;
    cudaGraphKernelNodeGetParams(node, &kp);
    void *args[] = {&o, &a, &b, &m, &k, &log_n, &total};
    kp.kernelParams = args;
    probe("runtime: node SetParams + cudaGraphLaunch", [&] { cudaGraphExecKernelNodeSetParams(ge, node, &kp); cudaGraphLaunch(ge, s); }, s);
    // Issue rate: 100 launches back to back (host µs per launch, then one synchronize).
    auto rate = [&](const char *name, std::function<void()> call) {
        for (int i = 0; i < 100; i++) call();
        cudaStreamSynchronize(s);
        double t0 = now_us();
        for (int i = 0; i < 1000; i++) call();
        double t1 = now_us();
        cudaStreamSynchronize(s);
        double t2 = now_us();
        printf("| %-44s | %6.2f µs per call | %6.2f µs per launch incl. drain |\n", name, (t1 - t0) / 1000, (t2 - t0) / 1000);
    };
    rate("rate: driver cuLaunchKernel", [&] { cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, (CUstream)s, params, nullptr); });
    rate("rate: SetParams + cudaGraphLaunch", [&] { cudaGraphExecKernelNodeSetParams(ge, node, &kp); cudaGraphLaunch(ge, s); });
    rate("rate: cudaGraphLaunch", [&] { cudaGraphLaunch(ge, s); });
    rate("rate: cudaMemsetAsync 8 bytes", [&] { cudaMemsetAsync(m, 0, 8, s); });
    // Does updating an executable graph whose replay is still running wait for it? Replay a
    // ~0.5 ms spin kernel's graph, then time a parameter update and a second replay.
    cudaGraph_t sg;
    cudaGraphExec_t sge;
    long long cycles = 1000000;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    spin<<<1, 32, 0, s>>>(cycles);
    cudaStreamEndCapture(s, &sg);
    cudaGraphInstantiate(&sge, sg, 0);
    cudaGraphNode_t sn;
    size_t one = 1;
    cudaGraphGetNodes(sg, &sn, &one);
    cudaKernelNodeParams sp;
    cudaGraphKernelNodeGetParams(sn, &sp);
    void *sargs[] = {&cycles};
    sp.kernelParams = sargs;
    for (int i = 0; i < 3; i++) {
        cudaGraphLaunch(sge, s);
        double t0 = now_us();
        cudaGraphExecKernelNodeSetParams(sge, sn, &sp);
        double t1 = now_us();
        cudaGraphLaunch(sge, s);
        double t2 = now_us();
        cudaStreamSynchronize(s);
        double t3 = now_us();
        printf("| update while replaying a ~0.5 ms kernel | SetParams %8.2f µs | relaunch %8.2f µs | drain %8.2f µs |\n", t1 - t0, t2 - t1, t3 - t2);
    }
    cudaError_t e = cudaGetLastError();
    printf("last error: %s\n", cudaGetErrorString(e));
    return 0;
}
