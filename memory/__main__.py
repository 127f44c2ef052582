import sys

from memory.cli import main

sys.exit(main())
