# Install rules and the CMake package: a game server's CMake does `find_package(vtp)` and links vtp::terrain, vtp::mesher,
# vtp::physics and, for a Bullet dynamics world, vtp::physics_bullet.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS vtp_terrain vtp_mesher vtp_physics vtp_physics_bullet EXPORT vtpTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT vtpTargets NAMESPACE vtp:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vtp)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/vtpConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/vtpConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vtp)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/vtpConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/vtpConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/vtpConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vtp)
