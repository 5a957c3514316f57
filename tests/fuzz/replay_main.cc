// Replays fuzz inputs through a target's LLVMFuzzerTestOneInput without libFuzzer: the normal build (gcc, and the
// ASan+UBSan build of `tools/dev test`) runs every committed corpus file on every change (CTest fuzz_replay.*).
// Arguments are files or directories (every regular file directly inside, sorted by name). A crash, a sanitizer
// report or an abort fails the test like it fails the fuzzer; the last line names how many inputs ran.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool collect(const std::string& path, std::vector<std::string>& files) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "replay: stat(\"%s\"): %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    files.push_back(path);
    return true;
  }
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) {
    std::fprintf(stderr, "replay: opendir(\"%s\"): %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  std::vector<std::string> found;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string file = path + "/" + entry->d_name;
    if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) found.push_back(file);
  }
  ::closedir(dir);
  std::sort(found.begin(), found.end());
  files.insert(files.end(), found.begin(), found.end());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (!collect(argv[i], files)) return 2;
  }
  if (files.empty()) {
    std::fprintf(stderr, "replay: no inputs (usage: %s FILE_OR_DIR...)\n", argv[0]);
    return 2;
  }
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
      return 2;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replay: %zu inputs ran\n", files.size());
  return 0;
}
