// A hand-written reference of the fused CPU attention design that the CPU
// speed issue asks the compiler for (benchmarks/README.md, "What the FMA-peak
// target needs"): what that design reaches on the machine of the run, so
// that the compiler's kernel is measured against an attainable rate as well
// as against the FMA peak. It is not part of rope-mlir and nothing calls it
// but benchmarks/run.py.
//
// Causal attention, f32, D = 128, B = 1, positions 0..S-1, HF's rotate_half
// rotation from cos/sin tables [S, 128], scale 1/sqrt(D), GQA by kv head.
// The design:
//   * K rotated and packed once per kv head, into key-tile panels
//     [S / KT][D][KT] (each panel contiguous: no power-of-two row stride);
//   * each query tile of QT rows rotated and scaled by scale·log2(e) once;
//   * Q·Kᵀ in register blocks of RB rows × the whole key tile (RB · KT / 16
//     accumulators), whose epilogue keeps the scores in registers through
//     the causal rule (diagonal tiles only), the row max, exp2 (a degree-6
//     polynomial and scalef) and the row sum; P is stored once;
//   * P·V in 8 × 32 register blocks, the output tile rescaled as it is
//     loaded; query rows that see no key of a diagonal tile skip it.
// AVX-512F only; fused_attention_available() says whether it was built so.

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX512F__)
#include <immintrin.h>

enum { kD = 128, kQT = 256, kKT = 64, kRB = 4 };

int fused_attention_available(void) { return 1; }

// 2^x for x <= 0 (or -inf: 0 after the clamp's 2^-126, which a score that
// the causal rule dropped contributes as nothing). Not a general exp2.
static inline __m512 exp2_nonpositive(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-126.f));
  __m512 n =
      _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 f = _mm512_sub_ps(x, n);
  __m512 p = _mm512_set1_ps(1.535336188319500e-4f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.339887440266574e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.618437357674640e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.550332471162809e-2f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402264791363012e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931472028550421e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// rotate_half of row `x` at table row `c`, `s`, times `scale`, into `out`.
static void rotate_row(const float *x, const float *c, const float *s,
                       float scale, float *out) {
  for (int d = 0; d < kD; ++d) {
    float partner = d < kD / 2 ? -x[d + kD / 2] : x[d - kD / 2];
    out[d] = (x[d] * c[d] + partner * s[d]) * scale;
  }
}

// K of one kv head rotated into panels [S / KT][D][KT].
static void pack_keys(const float *k, const float *cos, const float *sin,
                      int seq, float *panels) {
  float row[kD];
  for (int j = 0; j < seq; ++j) {
    rotate_row(k + (size_t)j * kD, cos + (size_t)j * kD, sin + (size_t)j * kD,
               1.f, row);
    float *panel = panels + (size_t)(j / kKT) * kD * kKT + j % kKT;
    for (int d = 0; d < kD; ++d)
      panel[d * kKT] = row[d];
  }
}

struct scratch {
  float *q, *p, *acc, *m, *l, *alpha;
};

// One query tile [i0, i0 + QT) of one head.
static void query_tile(const float *q, const float *panels, const float *v,
                       const float *cos, const float *sin, float *out, int i0,
                       struct scratch *w) {
  const float qscale = 1.4426950408889634f / sqrtf((float)kD);
  for (int r = 0; r < kQT; ++r) {
    size_t row = (size_t)(i0 + r) * kD;
    rotate_row(q + row, cos + row, sin + row, qscale, w->q + r * kD);
    w->m[r] = -INFINITY;
    w->l[r] = 0.f;
  }
  memset(w->acc, 0, sizeof(float) * kQT * kD);
  for (int j0 = 0; j0 < i0 + kQT; j0 += kKT) {
    const float *kt = panels + (size_t)(j0 / kKT) * kD * kKT;
    int diagonal = j0 + kKT - 1 > i0;
    // Rows before `first` see no key of this tile.
    int first = diagonal && j0 > i0 ? (j0 - i0) / kRB * kRB : 0;
    for (int r = 0; r < first; ++r)
      w->alpha[r] = 1.f;
    for (int i = first; i < kQT; i += kRB) {
      __m512 acc[kRB][kKT / 16];
      for (int a = 0; a < kRB; ++a)
        for (int c = 0; c < kKT / 16; ++c)
          acc[a][c] = _mm512_setzero_ps();
#pragma clang loop unroll_count(4)
      for (int d = 0; d < kD; ++d) {
        __m512 b[kKT / 16];
        for (int c = 0; c < kKT / 16; ++c)
          b[c] = _mm512_load_ps(kt + d * kKT + 16 * c);
        for (int a = 0; a < kRB; ++a) {
          __m512 x = _mm512_set1_ps(w->q[(i + a) * kD + d]);
          for (int c = 0; c < kKT / 16; ++c)
            acc[a][c] = _mm512_fmadd_ps(x, b[c], acc[a][c]);
        }
      }
      for (int a = 0; a < kRB; ++a) {
        int r = i + a;
        if (diagonal) {
          for (int c = 0; c < kKT / 16; ++c) {
            __m512i key =
                _mm512_add_epi32(_mm512_set1_epi32(j0 + 16 * c),
                                 _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                   10, 11, 12, 13, 14, 15));
            __mmask16 seen =
                _mm512_cmple_epi32_mask(key, _mm512_set1_epi32(i0 + r));
            acc[a][c] = _mm512_mask_blend_ps(seen, _mm512_set1_ps(-INFINITY),
                                             acc[a][c]);
          }
        }
        __m512 mx = acc[a][0];
        for (int c = 1; c < kKT / 16; ++c)
          mx = _mm512_max_ps(mx, acc[a][c]);
        float m = fmaxf(w->m[r], _mm512_reduce_max_ps(mx));
        float alpha = exp2f(w->m[r] - m);
        __m512 vm = _mm512_set1_ps(m), sum = _mm512_setzero_ps();
        for (int c = 0; c < kKT / 16; ++c) {
          __m512 p = exp2_nonpositive(_mm512_sub_ps(acc[a][c], vm));
          sum = _mm512_add_ps(sum, p);
          _mm512_store_ps(w->p + r * kKT + 16 * c, p);
        }
        w->m[r] = m;
        w->alpha[r] = alpha;
        w->l[r] = w->l[r] * alpha + _mm512_reduce_add_ps(sum);
      }
    }
    const float *vt = v + (size_t)j0 * kD;
    int firstBlock = first / 8 * 8;
    for (int r = firstBlock; r < first; ++r)
      memset(w->p + r * kKT, 0, sizeof(float) * kKT);
    for (int i = firstBlock; i < kQT; i += 8) {
      for (int j = 0; j < kD; j += 32) {
        __m512 acc[8][2];
        for (int r = 0; r < 8; ++r) {
          __m512 s = _mm512_set1_ps(w->alpha[i + r]);
          acc[r][0] =
              _mm512_mul_ps(_mm512_load_ps(w->acc + (i + r) * kD + j), s);
          acc[r][1] =
              _mm512_mul_ps(_mm512_load_ps(w->acc + (i + r) * kD + j + 16), s);
        }
#pragma clang loop unroll_count(8)
        for (int k = 0; k < kKT; ++k) {
          __m512 b0 = _mm512_loadu_ps(vt + k * kD + j);
          __m512 b1 = _mm512_loadu_ps(vt + k * kD + j + 16);
          for (int r = 0; r < 8; ++r) {
            __m512 x = _mm512_set1_ps(w->p[(i + r) * kKT + k]);
            acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);
          }
        }
        for (int r = 0; r < 8; ++r) {
          _mm512_store_ps(w->acc + (i + r) * kD + j, acc[r][0]);
          _mm512_store_ps(w->acc + (i + r) * kD + j + 16, acc[r][1]);
        }
      }
    }
  }
  for (int r = 0; r < kQT; ++r) {
    float inv = 1.f / w->l[r];
    for (int d = 0; d < kD; ++d)
      out[(size_t)(i0 + r) * kD + d] = w->acc[r * kD + d] * inv;
  }
}

// out[1, hq, seq, 128] = causal attention of q [1, hq, seq, 128] over k, v
// [1, hkv, seq, 128], Q and K rotated by cos/sin [seq, 128]. Returns 0, or -1
// where seq is not a multiple of the query tile or memory runs out.
int fused_attention(const float *q, const float *k, const float *v,
                    const float *cos, const float *sin, float *out, int hq,
                    int hkv, int seq) {
  if (seq % kQT != 0 || hq % hkv != 0)
    return -1;
  size_t headSize = (size_t)seq * kD;
  float *panels = aligned_alloc(64, sizeof(float) * hkv * headSize);
  if (!panels)
    return -1;
#pragma omp parallel for schedule(static, 1)
  for (int h = 0; h < hkv; ++h)
    pack_keys(k + h * headSize, cos, sin, seq, panels + h * headSize);
  int tiles = seq / kQT, group = hq / hkv, failed = 0;
#pragma omp parallel
  {
    struct scratch w;
    w.q = aligned_alloc(64, sizeof(float) * kQT * kD);
    w.p = aligned_alloc(64, sizeof(float) * kQT * kKT);
    w.acc = aligned_alloc(64, sizeof(float) * kQT * kD);
    w.m = malloc(sizeof(float) * kQT * 3);
    if (!w.q || !w.p || !w.acc || !w.m) {
#pragma omp atomic write
      failed = 1;
    } else {
      w.l = w.m + kQT;
      w.alpha = w.l + kQT;
      // Head by head, so that a head's K panels and V stay in the caches
      // across its tiles; in each head the longest tiles (last in the
      // sequence) first.
#pragma omp for schedule(dynamic, 1) collapse(2)
      for (int h = 0; h < hq; ++h)
        for (int t = 0; t < tiles; ++t)
          query_tile(q + h * headSize, panels + (h / group) * headSize,
                     v + (h / group) * headSize, cos, sin, out + h * headSize,
                     (tiles - 1 - t) * kQT, &w);
    }
    free(w.q);
    free(w.p);
    free(w.acc);
    free(w.m);
  }
  free(panels);
  return failed ? -1 : 0;
}

#else

int fused_attention_available(void) { return 0; }

int fused_attention(const float *q, const float *k, const float *v,
                    const float *cos, const float *sin, float *out, int hq,
                    int hkv, int seq) {
  (void)q, (void)k, (void)v, (void)cos, (void)sin, (void)out, (void)hq,
      (void)hkv, (void)seq;
  return -1;
}

#endif
