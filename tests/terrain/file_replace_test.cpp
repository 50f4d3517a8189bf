// Replacing files atomically (file_replace.h): what a write leaves beside its target, and which temp files of dead
// writers a later write removes.
#include "vtp/terrain/file_replace.h"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/temp_dir.h"

using namespace vtp::terrain;
using vtp::Result;
namespace fs = std::filesystem;
using vtp::test::TempDir;

namespace {

std::vector<std::uint8_t> bytesOf(const std::string& s) { return {s.begin(), s.end()}; }

std::string contents(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A file named `name` in `dir` whose modification time lies `age` seconds back.
fs::path fileAged(const fs::path& dir, const std::string& name, int age) {
  const fs::path p = dir / name;
  std::ofstream(p) << "partial";
  fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::seconds(age));
  return p;
}

// `dir`/shared, made sticky and world-writable as /tmp is.
fs::path stickyDirectory(const TempDir& dir) {
  const fs::path shared = dir.path / "shared";
  fs::create_directory(shared);
  REQUIRE(::chmod(shared.c_str(), 01777) == 0);
  return shared;
}

}  // namespace

TEST_CASE("replaceFile: writes the new contents and leaves nothing else beside them") {
  TempDir dir;
  const fs::path target = dir.path / "report.json";
  REQUIRE(replaceFile(bytesOf("old"), target).ok());
  REQUIRE(replaceFile(bytesOf("new contents"), target).ok());
  CHECK(contents(target) == "new contents");
  CHECK(dir.names() == std::vector<std::string>{"report.json"});
}

TEST_CASE("replaceFile: a write removes the temp files of dead writers of its target and only those") {
  TempDir dir;
  const fs::path target = dir.path / "world.vtw";
  fileAged(dir.path, "world.vtw.tmp.4242.0", 600);              // a dead writer's: removed
  fileAged(dir.path, "world.vtw.tmp.4242.1", 2);                // too young: its writer may not have locked it yet
  const fs::path held = fileAged(dir.path, "world.vtw.tmp.77.3", 600);  // a live writer's: locked
  fileAged(dir.path, "world.vtw.tmp.77.x", 600);                // not a temp name
  fileAged(dir.path, "other.vtw.tmp.4242.0", 600);              // another target's
  const int fd = ::open(held.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);

  REQUIRE(replaceFile(bytesOf("world"), target).ok());
  CHECK(dir.names() == std::vector<std::string>{"other.vtw.tmp.4242.0", "world.vtw", "world.vtw.tmp.4242.1",
                                                "world.vtw.tmp.77.3", "world.vtw.tmp.77.x"});
  // The lock released, the old one goes; the young one goes when no minimum age is asked.
  ::close(fd);
  CHECK(removeOrphanedTempFiles(target) == 1);
  CHECK(removeOrphanedTempFiles(target, 0) == 1);
  CHECK(dir.names() == std::vector<std::string>{"other.vtw.tmp.4242.0", "world.vtw", "world.vtw.tmp.77.x"});
  CHECK(contents(target) == "world");
}

TEST_CASE("replaceFile: refuses a FIFO or device target before writing anything") {
  TempDir dir;
  const fs::path fifo = dir.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const vtp::Status s = replaceFile(bytesOf("x"), fifo);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == vtp::ErrorCode::kInvalidArgument);
  CHECK(fs::is_fifo(fifo));
  CHECK(dir.names() == std::vector<std::string>{"pipe"});
  const vtp::Status null = replaceFile(bytesOf("x"), "/dev/null");
  REQUIRE_FALSE(null.ok());
  CHECK(null.error().code == vtp::ErrorCode::kInvalidArgument);
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("replaceFile: writes through links including dangling ones and refuses a directory before writing") {
  TempDir dir;
  fs::create_directory(dir.path / "worlds");
  // A dangling link: the first save creates the file it names; the link stays a link.
  fs::create_symlink("worlds/v2.vtw", dir.path / "current.vtw");
  REQUIRE(replaceFile(bytesOf("v2"), dir.path / "current.vtw").ok());
  CHECK(fs::is_symlink(dir.path / "current.vtw"));
  CHECK(contents(dir.path / "worlds" / "v2.vtw") == "v2");
  // A chain of two links, the second relative to its own directory.
  fs::create_symlink("v2.vtw", dir.path / "worlds" / "latest.vtw");
  fs::create_symlink("worlds/latest.vtw", dir.path / "chain.vtw");
  REQUIRE(replaceFile(bytesOf("v3"), dir.path / "chain.vtw").ok());
  CHECK(fs::is_symlink(dir.path / "chain.vtw"));
  CHECK(fs::is_symlink(dir.path / "worlds" / "latest.vtw"));
  CHECK(contents(dir.path / "worlds" / "v2.vtw") == "v3");
  CHECK(dir.names() == std::vector<std::string>{"chain.vtw", "current.vtw", "worlds"});
  // A loop of links is an error, not a hang.
  fs::create_symlink("loop_b", dir.path / "loop_a");
  fs::create_symlink("loop_a", dir.path / "loop_b");
  CHECK(replaceFile(bytesOf("x"), dir.path / "loop_a").error().code == vtp::ErrorCode::kIo);
  // A directory: refused by open, nothing created beside it.
  const Result<FileReplacement> onto_dir = FileReplacement::open(dir.path / "worlds");
  REQUIRE_FALSE(onto_dir.ok());
  CHECK(onto_dir.error().code == vtp::ErrorCode::kIo);
  CHECK(dir.names() == std::vector<std::string>{"chain.vtw", "current.vtw", "loop_a", "loop_b", "worlds"});
}

TEST_CASE("replaceFile: a new file gets 0666 less the umask and a replaced one keeps its mode") {
  TempDir dir;
  const mode_t old_umask = ::umask(027);
  REQUIRE(replaceFile(bytesOf("a"), dir.path / "new.json").ok());
  ::umask(old_umask);
  struct stat st {};
  REQUIRE(::stat((dir.path / "new.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  REQUIRE(::chmod((dir.path / "new.json").c_str(), 0600) == 0);
  REQUIRE(replaceFile(bytesOf("b"), dir.path / "new.json").ok());
  REQUIRE(::stat((dir.path / "new.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("replaceFile: a replaced file keeps its set-ID bits and its temp file is private until commit") {
  TempDir dir;
  const fs::path target = dir.path / "tool.bin";
  REQUIRE(replaceFile(bytesOf("old"), target).ok());
  REQUIRE(::chmod(target.c_str(), 06754) == 0);
  Result<FileReplacement> file = FileReplacement::open(target);
  REQUIRE(file.ok());
  // The temp file, while written: 0600, whatever the target's mode.
  for (const auto& e : fs::directory_iterator(dir.path)) {
    if (e.path() == target) continue;
    struct stat st {};
    REQUIRE(::stat(e.path().c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
  }
  REQUIRE(file->write(bytesOf("new")).ok());
  REQUIRE(file->commit().ok());
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 06754);
  CHECK(contents(target) == "new");
}

TEST_CASE("replaceFile: another user's link in a sticky world-writable dir is not followed and a pipe is refused") {
  TempDir dir;
  const fs::path shared = stickyDirectory(dir);
  const fs::path link = shared / "report.json";
  fs::create_symlink(dir.path / "elsewhere.json", link);
  if (::geteuid() == 0) {
    REQUIRE(::lchown(link.c_str(), 65534, 65534) == 0);  // the link belongs to nobody
    const vtp::Status s = replaceFile(bytesOf("x"), link);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == vtp::ErrorCode::kIo);
    CHECK(s.error().message.find("sticky") != std::string::npos);
    CHECK_FALSE(fs::exists(dir.path / "elsewhere.json"));
  } else {
    MESSAGE("not root: cannot give the link to another user; the refusal is not checked");
  }
  // A pipe named through /proc (as /dev/stdout is, when stdout is a pipe): a FIFO, refused before anything.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const vtp::Status piped = replaceFile(bytesOf("x"), "/proc/self/fd/" + std::to_string(fds[1]));
  ::close(fds[0]);
  ::close(fds[1]);
  REQUIRE_FALSE(piped.ok());
  CHECK(piped.error().code == vtp::ErrorCode::kInvalidArgument);
}

TEST_CASE("namesStream: devices and FIFOs and open descriptors' names are streams but files and new paths are not") {
  TempDir dir;
  CHECK(namesStream("/dev/null"));
  CHECK(namesStream("/dev/stdout"));  // a link into /proc/self/fd, whatever stdout is
  CHECK(namesStream("/proc/self/fd/2"));
  const fs::path fifo = dir.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(namesStream(fifo));
  REQUIRE(replaceFile(bytesOf("x"), dir.path / "file").ok());
  CHECK_FALSE(namesStream(dir.path / "file"));
  CHECK_FALSE(namesStream(dir.path / "new"));
  fs::create_symlink("file", dir.path / "link");
  CHECK_FALSE(namesStream(dir.path / "link"));
  // /dev/stdout redirected to a file (fd 9 standing for it): its /proc name is refused, the file left as it was.
  const int fd = ::open((dir.path / "file").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  REQUIRE(fd >= 0);
  const vtp::Status s = replaceFile(bytesOf("y"), "/proc/self/fd/" + std::to_string(fd));
  ::close(fd);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == vtp::ErrorCode::kInvalidArgument);
  CHECK(contents(dir.path / "file") == "x");
}

TEST_CASE("replaceFile: in a sticky world-writable directory another user's file is not replaced even by root") {
  TempDir dir;
  const fs::path shared = stickyDirectory(dir);
  const fs::path planted = shared / "report.json";
  REQUIRE(replaceFile(bytesOf("planted"), planted).ok());
  if (::geteuid() != 0) {
    MESSAGE("not root: cannot plant another user's file; the refusal is not checked");
    return;
  }
  REQUIRE(::chown(planted.c_str(), 65534, 65534) == 0);
  const vtp::Status s = replaceFile(bytesOf("root's"), planted);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == vtp::ErrorCode::kIo);
  CHECK(contents(planted) == "planted");
  // Root's own file there, and another user's file in a sticky directory that is not world-writable: replaced.
  REQUIRE(::chmod(shared.c_str(), 01755) == 0);
  CHECK(replaceFile(bytesOf("root's"), planted).ok());
}
