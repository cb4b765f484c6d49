// jest globalSetup: names this run's folder of the secret scan (workers inherit the variable).
import { RUN_ENV } from './scan';

export default async function setup(): Promise<void> {
	process.env[RUN_ENV] = `${process.pid}-${Date.now()}`;
}
