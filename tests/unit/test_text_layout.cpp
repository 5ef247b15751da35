#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "report/text_layout.h"

namespace sdpa {
namespace {

const std::string kEllipsis = "\xE2\x80\xA6";

bool is_word(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// Kernel names as profiles record them: cuBLAS, cuDNN and this tool's own template kernels.
const std::vector<std::string> kNames = {
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_32_64x256x64_4x1x1_cga1x1x1_"
    "kernel0_0",
    "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_"
    "alignc4_execute_kernel__5x_cublas",
    "flash_fwd_kernel<FlashFwdTraits<64, 128, 64, 4, true, 2>, __nv_bfloat16, true>",
    "efficient_fwd_kernel<EfficientTraits<64>, __nv_bfloat16, true>",
    "softmax_rows_in_registers_kernel<__nv_bfloat16, 4>",
};

TEST(TextLayout, DisplayWidthCountsCodePointsAndSkipsColour) {
  EXPECT_EQ(display_width("0.637 \xC2\xB1"
                          "0.3%"),
            11u);  // the ± is one column
  EXPECT_EQ(display_width(kEllipsis), 1u);
  EXPECT_EQ(display_width("\x1b[1;32mcudnn\x1b[0m"), 5u);
  EXPECT_EQ(pad("\xC2\xB1", 3), "\xC2\xB1  ");
  EXPECT_EQ(pad("7", 3, true), "  7");
  EXPECT_EQ(pad("toolong", 3), "toolong");
}

TEST(TextLayout, ShortNamesStayWhole) {
  EXPECT_EQ(shorten_middle("tril_kernel", 32), "tril_kernel");
  EXPECT_EQ(shorten_middle("tril_kernel", 11), "tril_kernel");
}

TEST(TextLayout, LongNamesLoseTheirMiddleAtIdentifierBoundaries) {
  EXPECT_EQ(shorten_middle(kNames[0], 32),
            "nvjet_sm90_tst_256x128\xE2\x80\xA6"
            "coopA_TNT");
  EXPECT_EQ(shorten_middle(kNames[1], 32), "cudnn_generated_fort_\xE2\x80\xA6_kernel0_0");
  EXPECT_EQ(shorten_middle(kNames[3], 32),
            "flash_fwd_kernel\xE2\x80\xA6"
            "bfloat16, true>");
}

// For every width: it fits, it is the name's own start and end around one ellipsis, the end is
// never cut inside an identifier, and the start only when the first identifier alone is too long.
TEST(TextLayout, ShortenedNamesFitAndKeepTheirEndWhole) {
  for (const std::string& name : kNames)
    for (std::size_t width = 2; width <= name.size(); ++width) {
      const std::string s = shorten_middle(name, width);
      SCOPED_TRACE(name + " at " + std::to_string(width) + ": " + s);
      EXPECT_LE(display_width(s), width);
      if (width == name.size()) {
        EXPECT_EQ(s, name);
        continue;
      }
      const std::size_t at = s.find(kEllipsis);
      ASSERT_NE(at, std::string::npos);
      const std::string head = s.substr(0, at);
      const std::string tail = s.substr(at + kEllipsis.size());
      EXPECT_EQ(name.substr(0, head.size()), head);
      ASSERT_LE(tail.size(), name.size());
      EXPECT_EQ(name.substr(name.size() - tail.size()), tail);
      const std::size_t tail_start = name.size() - tail.size();
      if (!tail.empty() && tail_start > 0) {
        EXPECT_FALSE(is_word(name[tail_start - 1]) && is_word(name[tail_start]));
      }
      const std::size_t first_word =
          std::find_if_not(name.begin(), name.end(), is_word) - name.begin();
      if (head.size() > first_word) {
        EXPECT_FALSE(is_word(name[head.size() - 1]) && is_word(name[head.size()]));
      }
    }
}

TEST(TextLayout, WrapsWithAHangingIndent) {
  const std::string text =
      "math B8 H16 S4096 D64 bf16: causal mask built on every call: 4 kernels per forward, 241.1 "
      "us "
      "(fill_kernel<bool>, tril_kernel, logical_not_kernel, where_scalar_kernel)";
  const std::string wrapped = wrap(text, 60, 2, 4);
  EXPECT_EQ(wrapped,
            "  math B8 H16 S4096 D64 bf16: causal mask built on every\n"
            "      call: 4 kernels per forward, 241.1 us\n"
            "      (fill_kernel<bool>, tril_kernel, logical_not_kernel,\n"
            "      where_scalar_kernel)\n");
  EXPECT_EQ(wrap("short", 60, 2, 4), "  short\n");
}

TEST(TextLayout, BreaksAWordLongerThanTheLine) {
  const std::string wrapped = wrap("see " + std::string(50, 'x') + " end", 30, 0, 2);
  std::size_t start = 0;
  while (start < wrapped.size()) {
    const std::size_t end = wrapped.find('\n', start);
    EXPECT_LE(display_width(wrapped.substr(start, end - start)), 30u) << wrapped;
    start = end + 1;
  }
  EXPECT_NE(wrapped.find("end\n"), std::string::npos);
}

TEST(TextLayout, PaintsOnlyWhenColourIsOn) {
  EXPECT_EQ(paint("cudnn", Tone::best, false), "cudnn");
  EXPECT_EQ(paint("cudnn", Tone::plain, true), "cudnn");
  EXPECT_EQ(paint("failed", Tone::bad, true), "\x1b[1;31mfailed\x1b[0m");
}

}  // namespace
}  // namespace sdpa
