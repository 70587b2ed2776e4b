import { stringify } from 'yaml';
import { probePolicyCrd } from './crd.ts';

/** The path of the generated CRD, relative to the repository root. */
export const crdPath = 'crds/outprobe.io_probepolicies.yaml';

const header = [
  ' Generated from src/policy/crd.ts: do not edit by hand.',
  ' Regenerate: UPDATE_CRD=1 node --test test/unit/policy/crd.test.ts',
].join('\n');

/** The CRD as the YAML text committed in `crds/`. */
export function probePolicyCrdYaml(): string {
  const body = stringify(probePolicyCrd(), { lineWidth: 0, aliasDuplicateObjects: false });
  return `#${header.replaceAll('\n', '\n#')}\n${body}`;
}
