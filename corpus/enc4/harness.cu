// harness.cu - a stand-alone check of the enc4 stand-in on a GPU, independent
// of d4r-splice: builds the inputs the way recipes/enc4/layer.json describes
// them, runs prepass, enc4 and frame kernels, and reports the frame (hash,
// NaN/Inf, value spread).  Given extra modules (perturbed copies), it runs each
// and says which parts of the frame changed.
//
//   nvcc -O2 -o harness corpus/enc4/harness.cu -lcuda
//   ./harness corpus/enc4/weights.bin MODULE [MODULE...]     (PTX or cubin)
//
// The first module is the reference; it is run twice (determinism).
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorString(r_, &s_); \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_); exit(2); } } while (0)
#define RK(x) do { cudaError_t r_ = (x); if (r_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(r_)); exit(2); } } while (0)

static std::vector<char> slurp(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (!f) { perror(p); exit(2); }
    std::vector<char> v;
    char b[65536];
    size_t n;
    while ((n = fread(b, 1, sizeof b, f)) > 0) v.insert(v.end(), b, b + n);
    fclose(f);
    return v;
}

static uint64_t sm_state;
static uint64_t splitmix(void)
{
    uint64_t z = (sm_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct Frame { std::vector<uint8_t> rgba, s0, s1, s2, small; };

static uint64_t fnv(const std::vector<uint8_t> &v, uint64_t h = 1469598103934665603ull)
{
    for (uint8_t b : v) h = (h ^ b) * 1099511628211ull;
    return h;
}

static void f16_stats(const char *name, const std::vector<uint8_t> &v)
{
    size_t n = v.size() / 2, bad = 0, zero = 0;
    double mn = 1e30, mx = -1e30, sum = 0;
    std::set<uint16_t> distinct;
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, &v[2 * i], 2);
        float f = __half2float(*reinterpret_cast<__half *>(&h));
        distinct.insert(h);
        if (!std::isfinite(f)) { bad++; continue; }
        if (f == 0) zero++;
        mn = fmin(mn, f); mx = fmax(mx, f); sum += f;
    }
    printf("  %-6s %6zu f16: nan/inf %zu, zero %zu, distinct %zu, min %.4g max %.4g mean %.4g\n",
           name, n, bad, zero, distinct.size(), mn, mx, sum / (double)(n - bad));
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: harness WEIGHTS MODULE [MODULE...]\n"); return 2; }
    RK(cudaFree(0));
    std::vector<char> w = slurp(argv[1]);
    const size_t PLANE = 65945600, WB = 533856, SMALL = 39424, RGBA = 235520;
    uint8_t *plane, *weights, *small, *rgba;
    RK(cudaMalloc(&plane, PLANE)); RK(cudaMalloc(&weights, WB));
    RK(cudaMalloc(&small, SMALL)); RK(cudaMalloc(&rgba, RGBA));
    RK(cudaMemset(weights, 0, WB));
    RK(cudaMemcpy(weights, w.data(), w.size() < WB ? w.size() : WB, cudaMemcpyHostToDevice));
    cudaChannelFormatDesc h4 = cudaCreateChannelDescHalf4();
    cudaArray_t tex_a, s_a[3];
    RK(cudaMallocArray(&tex_a, &h4, 80, 46));
    int sw[3] = {80, 80, 40}, sh[3] = {46, 46, 23};
    for (int i = 0; i < 3; i++) RK(cudaMallocArray(&s_a[i], &h4, sw[i], sh[i], cudaArraySurfaceLoadStore));
    std::vector<__half> tv(80 * 46 * 4);
    sm_state = 4;          // layer.json: tex0 random seed 4, f16 in [-1, 1]
    for (auto &x : tv) x = __double2half(-1.0 + (double)(splitmix() >> 11) * 0x1p-53 * 2.0);
    RK(cudaMemcpy2DToArray(tex_a, 0, 0, tv.data(), 80 * 8, 80 * 8, 46, cudaMemcpyHostToDevice));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = tex_a;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex;
    RK(cudaCreateTextureObject(&tex, &rd, &td, nullptr));
    cudaSurfaceObject_t surf[3];
    for (int i = 0; i < 3; i++) {
        cudaResourceDesc r = {};
        r.resType = cudaResourceTypeArray;
        r.res.array.array = s_a[i];
        RK(cudaCreateSurfaceObject(&surf[i], &r));
    }
    uint8_t pb[144];
    auto put64 = [&](int off, uint64_t v) { memcpy(pb + off, &v, 8); };
    auto params = [&](bool frame) {
        memset(pb, 0, sizeof pb);
        uint32_t ext[2] = {80, 46};
        memcpy(pb, ext, 8);
        put64(8, (uint64_t)plane); put64(40, (uint64_t)weights);
        put64(48, (uint64_t)(plane + 39567360)); put64(56, (uint64_t)small);
        if (frame) put64(64, (uint64_t)rgba);
        put64(88, tex); put64(112, surf[0]); put64(120, surf[1]); put64(128, surf[2]);
    };
    Frame ref;
    std::vector<int> runs = {2, 2};          // the reference twice, then each variant
    for (int i = 3; i < argc; i++) runs.push_back(i);
    for (size_t ri = 0; ri < runs.size(); ri++) {
        const int m = runs[ri];
        const bool rep = ri == 1;
        std::vector<char> img = slurp(argv[m]);
        img.push_back(0);
        CUmodule mod;
        char log[8192] = "", elog[8192] = "";
        CUjit_option o[4] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void *ov[4] = {log, (void *)(uintptr_t)sizeof log, elog, (void *)(uintptr_t)sizeof elog};
        cudaEvent_t e0, e1, e2, e3;
        RK(cudaEventCreate(&e0)); RK(cudaEventCreate(&e1)); RK(cudaEventCreate(&e2)); RK(cudaEventCreate(&e3));
        auto t0 = std::chrono::steady_clock::now();
        CUresult lr = cuModuleLoadDataEx(&mod, img.data(), 4, o, ov);
        double jit = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (lr != CUDA_SUCCESS) { fprintf(stderr, "%s: load failed: %s\n", argv[m], elog); return 2; }
        CUfunction fp, fe, ff;
        CK(cuModuleGetFunction(&fp, mod, "enc4_prepass_kernel"));
        CK(cuModuleGetFunction(&fe, mod, "cuda_dldn_engine_swin_enc4_kernel"));
        CK(cuModuleGetFunction(&ff, mod, "enc4_frame_kernel"));
        RK(cudaMemset(plane, 0, PLANE)); RK(cudaMemset(small, 0, SMALL)); RK(cudaMemset(rgba, 0, RGBA));
        std::vector<uint8_t> z(80 * 46 * 8, 0);
        for (int i = 0; i < 3; i++)
            RK(cudaMemcpy2DToArray(s_a[i], 0, 0, z.data(), sw[i] * 8, sw[i] * 8, sh[i], cudaMemcpyHostToDevice));
        size_t sz = 144;
        void *cfg[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, pb, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz, CU_LAUNCH_PARAM_END};
        params(false);
        RK(cudaEventRecord(e0));
        CK(cuLaunchKernel(fp, 11, 7, 1, 32, 1, 4, 0, 0, nullptr, cfg));
        RK(cudaEventRecord(e1));
        CK(cuLaunchKernel(fe, 11, 7, 1, 32, 1, 4, 0, 0, nullptr, cfg));
        RK(cudaEventRecord(e2));
        params(true);
        CK(cuLaunchKernel(ff, 20, 12, 1, 16, 16, 1, 0, 0, nullptr, cfg));
        RK(cudaEventRecord(e3));
        RK(cudaDeviceSynchronize());
        float tp, te, tf;
        RK(cudaEventElapsedTime(&tp, e0, e1)); RK(cudaEventElapsedTime(&te, e1, e2)); RK(cudaEventElapsedTime(&tf, e2, e3));
        Frame f;
        f.rgba.resize(RGBA); f.small.resize(SMALL);
        RK(cudaMemcpy(f.rgba.data(), rgba, RGBA, cudaMemcpyDeviceToHost));
        RK(cudaMemcpy(f.small.data(), small, SMALL, cudaMemcpyDeviceToHost));
        std::vector<uint8_t> *sv[3] = {&f.s0, &f.s1, &f.s2};
        for (int i = 0; i < 3; i++) {
            sv[i]->resize(sw[i] * sh[i] * 8);
            RK(cudaMemcpy2DFromArray(sv[i]->data(), sw[i] * 8, s_a[i], 0, 0, sw[i] * 8, sh[i], cudaMemcpyDeviceToHost));
        }
        uint64_t h = fnv(f.small, fnv(f.s2, fnv(f.s1, fnv(f.s0, fnv(f.rgba)))));
        printf("%s%s: jit %.2f s, prepass %.3f ms, enc4 %.3f ms, frame %.3f ms, frame fnv64 %016llx\n",
               argv[m], rep ? " (again)" : "", jit, tp, te, tf, (unsigned long long)h);
        if (ri == 0) {
            ref = f;
            f16_stats("surf0", f.s0); f16_stats("surf1", f.s1); f16_stats("surf2", f.s2);
            std::set<uint32_t> colors;
            for (size_t i = 0; i < RGBA; i += 4) { uint32_t c; memcpy(&c, &f.rgba[i], 4); colors.insert(c); }
            std::set<uint32_t> st;
            size_t bad = 0;
            for (size_t i = 0; i < SMALL; i += 4) {
                float v;
                memcpy(&v, &f.small[i], 4);
                st.insert(*reinterpret_cast<uint32_t *>(&v));
                bad += !std::isfinite(v);
            }
            printf("  rgba   %zu distinct colours of %zu pixels; stats %zu distinct of %zu, nan/inf %zu\n",
                   colors.size(), RGBA / 4, st.size(), SMALL / 4, bad);
            FILE *o2 = fopen("enc4.frame", "wb");
            if (o2) {
                fwrite(f.rgba.data(), 1, RGBA, o2); fwrite(f.s0.data(), 1, f.s0.size(), o2);
                fwrite(f.s1.data(), 1, f.s1.size(), o2); fwrite(f.s2.data(), 1, f.s2.size(), o2);
                fwrite(f.small.data(), 1, SMALL, o2); fclose(o2);
            }
        } else {
            auto nd = [](const std::vector<uint8_t> &a, const std::vector<uint8_t> &b) {
                size_t n = 0; for (size_t i = 0; i < a.size(); i++) n += a[i] != b[i]; return n; };
            printf("  differs from the reference: rgba %zu, surf0 %zu, surf1 %zu, surf2 %zu, stats %zu bytes\n",
                   nd(f.rgba, ref.rgba), nd(f.s0, ref.s0), nd(f.s1, ref.s1), nd(f.s2, ref.s2), nd(f.small, ref.small));
        }
        CK(cuModuleUnload(mod));
    }
    return 0;
}
