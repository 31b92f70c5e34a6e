# Included by the install scripts (cmake --install, cpack), not by the build: the absolute places
# of the files that live outside the prefix's tree, computed from the prefix given at *install*
# time (cmake --install --prefix, CPack's /usr), which may differ from the one at configure time.
# Input: MTM_SYSCONFDIR (CMAKE_INSTALL_SYSCONFDIR), MTM_SYSTEMD_UNIT_DIR (empty: derived).
# Output: mtm_config_dir, mtm_unit_dir.

string(REGEX REPLACE "(.)/+$" "\\1" mtm_prefix "${CMAKE_INSTALL_PREFIX}")

# GNUInstallDirs' rule: prefix / or /usr -> /etc, /opt/X -> /etc/opt/X, else PREFIX/etc.
if(IS_ABSOLUTE "${MTM_SYSCONFDIR}")
  set(mtm_sysconfdir "${MTM_SYSCONFDIR}")
elseif(MTM_SYSCONFDIR STREQUAL "etc" AND mtm_prefix MATCHES "^/(usr)?$")
  set(mtm_sysconfdir "/etc")
elseif(MTM_SYSCONFDIR STREQUAL "etc" AND mtm_prefix MATCHES "^/opt/")
  set(mtm_sysconfdir "/etc${mtm_prefix}")
else()
  set(mtm_sysconfdir "${mtm_prefix}/${MTM_SYSCONFDIR}")
endif()
set(mtm_config_dir "${mtm_sysconfdir}/mtm")

# systemd reads units from /lib/systemd/system (Debian 12's place for packages) and from
# /usr/local/lib/systemd/system and /etc/systemd/system; other prefixes need a link or
# MTM_SYSTEMD_UNIT_DIR.
if(MTM_SYSTEMD_UNIT_DIR)
  set(mtm_unit_dir "${MTM_SYSTEMD_UNIT_DIR}")
elseif(mtm_prefix MATCHES "^/(usr)?$")
  set(mtm_unit_dir "/lib/systemd/system")
else()
  set(mtm_unit_dir "${mtm_prefix}/lib/systemd/system")
endif()

# An install dir (GNUInstallDirs' CMAKE_INSTALL_<dir>) as an absolute path under this prefix.
function(mtm_full_path out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  elseif(mtm_prefix STREQUAL "/")
    set(${out} "/${dir}" PARENT_SCOPE)
  else()
    set(${out} "${mtm_prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
