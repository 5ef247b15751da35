// A gpu/ header that declares a function profile/ defines: every gpu/ user then depends on
// profile/ without including it. The layering check must refuse it.
#pragma once

namespace sdpa {

const char* cupti_result_text(int result);

}  // namespace sdpa
