import sys

from gtune.cli import main

sys.exit(main())
