// The stop signals: one request per burst of the same signal (timeout's TERM to the process and
// then to its group), at once for a different or a later one.
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <gtest/gtest.h>

#include "cli/interrupts.h"

namespace sdpa {
namespace {

TEST(Interrupts, TheSameSignalTwiceAtOnceIsOneRequest) {
  EXPECT_EXIT(
      {
        const InterruptGuard guard;
        std::raise(SIGTERM);
        std::raise(SIGTERM);
        std::_Exit(InterruptGuard::signal_seen() == SIGTERM ? 7 : 8);
      },
      testing::ExitedWithCode(7), "");
}

TEST(Interrupts, ADifferentSignalEndsTheProcessAtOnce) {
  EXPECT_EXIT(
      {
        const InterruptGuard guard;
        std::raise(SIGTERM);
        std::raise(SIGINT);
        std::_Exit(0);
      },
      testing::ExitedWithCode(128 + SIGINT), "");
}

TEST(Interrupts, TheSameSignalAfterTheGracePeriodEndsTheProcessAtOnce) {
  EXPECT_EXIT(
      {
        const InterruptGuard guard;
        std::raise(SIGINT);
        usleep(static_cast<useconds_t>(kSameRequestWithinNs / 1000 + 200'000));
        std::raise(SIGINT);
        std::_Exit(0);
      },
      testing::ExitedWithCode(128 + SIGINT), "");
}

}  // namespace
}  // namespace sdpa
