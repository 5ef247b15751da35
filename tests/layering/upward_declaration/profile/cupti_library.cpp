// The definition, in a folder above the declaration's.
namespace sdpa {

const char* cupti_result_text(int result) {
  return result == 0 ? "ok" : "error";
}

}  // namespace sdpa
