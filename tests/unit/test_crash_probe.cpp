#include "profile/crash_probe.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

namespace sdpa {
namespace {

TEST(CrashProbe, AChildThatExitsIsNoDeathWhateverItsWorkDecided) {
  EXPECT_EQ(dies_in_a_child([] {}, 5000), std::nullopt);
  EXPECT_EQ(dies_in_a_child([] { (void)::write(-1, "", 0); }, 5000), std::nullopt);
}

TEST(CrashProbe, ACrashInTheChildIsNamedAndTheParentLives) {
  const auto death = dies_in_a_child([] { ::raise(SIGSEGV); }, 5000);
  ASSERT_TRUE(death.has_value());
  EXPECT_EQ(*death, "crashed with SIGSEGV (Segmentation fault)");
}

TEST(CrashProbe, AChildThatHangsIsKilledAtTheTimeout) {
  const auto death = dies_in_a_child([] { ::sleep(30); }, 200);
  ASSERT_TRUE(death.has_value());
  EXPECT_EQ(*death, "did not finish within 0.2 s");
}

}  // namespace
}  // namespace sdpa
