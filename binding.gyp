{
  "targets": [
    {
      "target_name": "quartet_native",
      "sources": ["native/quartet_native.cc"],
      "cflags_cc": ["-O3", "-std=c++17", "-Wall", "-Wextra"],
      "cflags_cc!": ["-fno-exceptions"]
    }
  ]
}
