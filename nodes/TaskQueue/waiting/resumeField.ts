import {
	automaticResumeField,
	canCarryAddress,
	isInputBlock,
	isMeantForAddress,
	RESUME_FIELD_KINDS,
} from '../helpers/blockModel';
import type { Block } from '../transport/schemas';

// Where Create and Wait writes its address: Automatic, or a field chosen by hand, and what is wrong
// with a choice (before any task, with its fix). The editor's list (methods/loadOptions.ts) and the
// run (waiting/setup.ts) decide the same way.

/** The field Create and Wait writes its address into, or what is wrong with the choice and its fix. */
export type ResumeFieldChoice =
	| { field: Block; automatic: boolean }
	| { problem: string; fix: string };

const named = (block: Block) => `"${block.name || block.id}" (${block.id})`;

/**
 * Resolves Resume Address Field: Automatic (empty) takes the one field the queue shows is meant for
 * the address (`isMeantForAddress`); a field chosen by hand must be able to carry it, must not be
 * one of the Values to Send, and must not be a field people read while the queue has one meant for
 * the address (the address would replace what people read, and what is mapped there would go to
 * the wrong field: loud, with its fix).
 */
export function chooseResumeField(
	blocks: Block[],
	chosen: string,
	mapped: Set<string>,
	queueLabel: string,
): ResumeFieldChoice {
	const suitable = blocks.filter((b) => canCarryAddress(b) && !mapped.has(b.id));
	const meant = blocks.filter((b) => isMeantForAddress(b));
	const pick =
		suitable.length > 0
			? `Set Resume Address Field to a read-only text or link field of the queue that is not among the Values to Send: ${suitable.map((b) => b.id).join(', ')}.`
			: `Queue ${queueLabel} has no read-only text or link field left for it. Add one (for example a read-only text field "resume_url") to the queue in the service, then pick it as Resume Address Field.`;
	const resolved = chosen || automaticResumeField(blocks);
	if (!resolved) {
		if (meant.length > 1)
			return {
				problem: `Resume Address Field is Automatic, but queue ${queueLabel} has several fields named for the address: ${meant.map(named).join(', ')}`,
				fix: 'Choose one of them as Resume Address Field.',
			};
		return {
			problem: `Resume Address Field is Automatic, but queue ${queueLabel} has no read-only text or link field named for the address`,
			fix:
				suitable.length > 0
					? `Add a read-only text field named for it (for example "resume_url") to the queue in the service, or choose one of ${suitable.map(named).join(', ')} as Resume Address Field: people then see the address there instead of what it holds.`
					: pick,
		};
	}
	const resume = blocks.find((b) => b.id === resolved);
	if (!resume || !RESUME_FIELD_KINDS.has(resume.type))
		return {
			problem: `Queue ${queueLabel.split(' ')[0]} has no text or link field "${resolved}" to carry the resume address`,
			fix: pick,
		};
	if (!isInputBlock(resume))
		return {
			problem: `People fill in the field "${resume.id}": it cannot carry the resume address`,
			fix: `A person would see the address in "${resume.id}" and could type over it; the run would then never hear of their answer. ${pick}`,
		};
	if (mapped.has(resume.id))
		return {
			problem: `The field "${resume.id}" is both the Resume Address Field and one of the Values to Send`,
			fix: `The node writes the resume address into "${resume.id}", so the value mapped there would never reach the person. Remove "${resume.id}" from Values to Send, or ${pick.charAt(0).toLowerCase()}${pick.slice(1)}`,
		};
	const meantInstead = meant.find((b) => b.id !== resume.id);
	if (chosen && !isMeantForAddress(resume) && meantInstead) {
		const mappedThere = mapped.has(meantInstead.id);
		return {
			problem: `Resume Address Field is ${named(resume)}, a field people read, while queue ${queueLabel} has ${named(meantInstead)} for the address`,
			fix: `People would see the waiting address where "${resume.name || resume.id}" should be${mappedThere ? `, and the value mapped into "${meantInstead.id}" under the address's name` : ''}. Set Resume Address Field to Automatic (it takes ${named(meantInstead)})${mappedThere ? `, remove "${meantInstead.id}" from Values to Send and map that value into "${resume.id}" instead` : ''}.`,
		};
	}
	return { field: resume, automatic: !chosen };
}
