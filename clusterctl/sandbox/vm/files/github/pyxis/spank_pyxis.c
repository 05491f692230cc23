/* gpucl sandbox stand-in for the pyxis SPANK plugin: same plugin name and main options, no
 * container runtime. A job asking for --container-image fails loudly instead of running bare. */
#include <slurm/spank.h>
#include <string.h>

SPANK_PLUGIN(pyxis, 1);

static int image_requested = 0;

static int take_image(int val, const char *optarg, int remote)
{
    (void)val;
    (void)remote;
    image_requested = optarg != NULL && optarg[0] != '\0';
    return 0;
}

static int take_other(int val, const char *optarg, int remote)
{
    (void)val;
    (void)optarg;
    (void)remote;
    return 0;
}

struct spank_option spank_options[] = {
    {"container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH",
     "[pyxis stand-in] image to run the job in (refused in the sandbox)", 1, 0, take_image},
    {"container-mounts", "SRC:DST[:FLAGS][,SRC:DST...]", "[pyxis stand-in] bind mounts", 1, 0,
     take_other},
    {"container-workdir", "PATH", "[pyxis stand-in] working directory", 1, 0, take_other},
    {"container-name", "NAME", "[pyxis stand-in] container name", 1, 0, take_other},
    {"container-writable", NULL, "[pyxis stand-in] writable container", 0, 0, take_other},
    {"container-mount-home", NULL, "[pyxis stand-in] mount home", 0, 0, take_other},
    {"no-container-mount-home", NULL, "[pyxis stand-in] do not mount home", 0, 0, take_other},
    {"container-env", "NAME[,NAME...]", "[pyxis stand-in] environment to keep", 1, 0, take_other},
    SPANK_OPTIONS_TABLE_END};

/* The plugstack arguments pyxis documents (README, "Configuration"); anything else is refused. */
static const char *known[] = {"runtime_path=", "remap_root=", "execute_entrypoint=",
                              "container_scope=", "sbatch_support=", "use_enroot_load=",
                              "importer=", NULL};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    (void)sp;
    for (int i = 0; i < ac; i++) {
        int ok = 0;
        for (const char **k = known; *k != NULL; k++)
            ok |= strncmp(av[i], *k, strlen(*k)) == 0;
        if (!ok) {
            slurm_error("pyxis: unknown configuration option: %s", av[i]);
            return -1;
        }
    }
    return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    if (image_requested) {
        slurm_error("pyxis: sandbox stand-in: no container runtime here (--container-image refused)");
        return -1;
    }
    return 0;
}
