/* SPDX-License-Identifier: GPL-2.0 */
/* `collector dump [--check] FILE|DIR...` */
#ifndef COLLECTOR_CMD_DUMP_H
#define COLLECTOR_CMD_DUMP_H

int cmd_dump(int argc, char **argv);

#endif /* COLLECTOR_CMD_DUMP_H */
