// The sandbox's people page: pick who you are, see the queues, take the next task, fill the
// form made from the queue's blocks, complete it. Plain JS, no build step.
(function () {
	'use strict';

	var INPUT_KINDS = [
		'image',
		'audio',
		'video',
		'pdf',
		'embed',
		'named_entity_recognition',
		'bounding_boxes',
	];
	var USER_KEY = 'taskQueueSandbox.user';
	var main = document.getElementById('main');
	var userSelect = document.getElementById('user-select');
	var users = [];
	/** What the home page says once, after a queue was made. */
	var notice = '';

	// ---- helpers ---------------------------------------------------------------------------

	function el(tag, attrs) {
		var node = document.createElement(tag);
		var children = Array.prototype.slice.call(arguments, 2);
		Object.keys(attrs || {}).forEach(function (k) {
			var v = attrs[k];
			if (v === undefined || v === null || v === false) return;
			if (k === 'text') node.textContent = v;
			else if (k === 'testid') node.setAttribute('data-testid', v);
			else if (k.slice(0, 2) === 'on') node.addEventListener(k.slice(2), v);
			else if (v === true) node.setAttribute(k, '');
			else node.setAttribute(k, v);
		});
		(function add(list) {
			list.forEach(function (c) {
				if (c === null || c === undefined || c === false) return;
				if (Array.isArray(c)) add(c);
				else node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
			});
		})(children);
		return node;
	}

	function api(method, path, body) {
		return fetch('/app/api' + path, {
			method: method,
			headers: body ? { 'Content-Type': 'application/json' } : {},
			body: body ? JSON.stringify(body) : undefined,
		}).then(function (res) {
			return res.json().then(function (data) {
				if (!res.ok) {
					var msg =
						(data && data.errors && data.errors[0] && data.errors[0].message) ||
						'HTTP ' + res.status;
					throw new Error(msg);
				}
				return data;
			});
		});
	}

	function settingsOf(block) {
		var s = block[block.type];
		return s && typeof s === 'object' ? s : {};
	}

	function isFilledByPeople(block) {
		return !settingsOf(block).read_only && INPUT_KINDS.indexOf(block.type) === -1;
	}

	function optionList(block) {
		return (settingsOf(block).options || []).map(function (o) {
			return typeof o === 'string'
				? { id: o, name: o }
				: { id: String(o.id), name: String(o.name || o.id) };
		});
	}

	function currentUser() {
		var email = userSelect.value;
		return (
			users.find(function (u) {
				return u.email === email;
			}) || null
		);
	}

	function go(path) {
		history.pushState({}, '', path);
		route();
	}

	function link(href, attrs) {
		var children = Array.prototype.slice.call(arguments, 2);
		attrs = attrs || {};
		attrs.href = href;
		attrs.onclick = function (e) {
			if (e.metaKey || e.ctrlKey || e.shiftKey) return;
			e.preventDefault();
			go(href);
		};
		return el.apply(null, ['a', attrs].concat(children));
	}

	function message(kind, text, testid) {
		return el('div', {
			class: 'message ' + kind,
			role: kind === 'error' ? 'alert' : 'status',
			testid: testid,
			text: text,
		});
	}

	// ---- who am I --------------------------------------------------------------------------

	function loadUsers() {
		return api('GET', '/users').then(function (list) {
			users = list;
			list.forEach(function (u) {
				userSelect.appendChild(
					el('option', { value: u.email, text: u.name + ' (' + u.email + ')' }),
				);
			});
			var saved = localStorage.getItem(USER_KEY);
			if (
				saved &&
				list.some(function (u) {
					return u.email === saved;
				})
			)
				userSelect.value = saved;
		});
	}

	userSelect.addEventListener('change', function () {
		localStorage.setItem(USER_KEY, userSelect.value);
		route();
	});

	// ---- home: the queues ------------------------------------------------------------------

	function renderHome() {
		var user = currentUser();
		if (!user) {
			main.replaceChildren(
				el(
					'div',
					{ class: 'card', testid: 'pick-user' },
					el('h1', { text: 'Welcome' }),
					el('p', {
						class: 'muted',
						text: 'Pick who you are in the top right corner to see your queues.',
					}),
					el(
						'div',
						{ class: 'row' },
						users.map(function (u) {
							return el(
								'button',
								{
									class: 'secondary',
									testid: 'pick-user-' + u.email,
									onclick: function () {
										userSelect.value = u.email;
										userSelect.dispatchEvent(new Event('change'));
									},
								},
								el('span', { text: u.name }),
								// who is a member of which organization: only members answer its queues
								el('span', {
									class: 'muted',
									text:
										' · ' +
										u.organizations
											.map(function (o) {
												return o.name + (o.admin ? ' (admin)' : '');
											})
											.join(', '),
								}),
							);
						}),
					),
				),
			);
			return Promise.resolve();
		}
		var orgs = user.organizations;
		return Promise.all(
			orgs.map(function (o) {
				return api('GET', '/orgs/' + o.id + '/queues');
			}),
		).then(function (lists) {
			var sections = orgs.map(function (org, i) {
				return el(
					'section',
					{ class: 'card', testid: 'org-' + org.id },
					el(
						'div',
						{ class: 'row' },
						el('h2', { text: org.name }),
						el('span', { class: 'badge', text: 'Organization ' + org.id }),
						el('span', { class: 'badge', text: org.admin ? 'admin' : 'member' }),
					),
					lists[i].length === 0
						? el('p', { class: 'muted', text: 'No queues.' })
						: el(
								'ul',
								{ class: 'queues', testid: 'queue-list' },
								lists[i].map(function (q) {
									return el(
										'li',
										{},
										link(
											'/app/queues/' + q.id,
											{ class: 'queue-tile', testid: 'queue-link-' + q.id },
											el('div', { class: 'name', text: q.name }),
											el('div', {
												class: 'count',
												testid: 'pending-count-' + q.id,
												text: String(q.n_waiting),
											}),
											el('div', {
												class: 'muted',
												text:
													'waiting' +
													(q.n_in_progress ? ' · ' + q.n_in_progress + ' in progress' : '') +
													' · queue ' +
													q.id +
													(q.active_users.length ? ' · working: ' + q.active_users.join(', ') : ''),
											}),
										),
									);
								}),
							),
					org.admin ? newQueueForm(org) : null,
				);
			});
			var created = notice;
			notice = '';
			main.replaceChildren.apply(
				main,
				[
					created ? message('success', created, 'queue-created') : null,
					el('h1', { text: 'Your queues' }),
					el('p', {
						class: 'muted',
						text: 'Hello ' + user.name + '. Open a queue to work on its tasks.',
					}),
				]
					.concat(sections)
					.filter(Boolean),
			);
		});
	}

	// ---- the builder's side: a new queue (admins) ------------------------------------------

	var FIELD_KINDS = [
		['text', 'Text'],
		['link', 'Link'],
		['number', 'Number'],
		['single_selection', 'Single selection'],
	];

	function fieldRow(list, preset) {
		preset = preset || {};
		var n = list.children.length + 1;
		var kind = el(
			'select',
			{ testid: 'field-kind-' + n, 'aria-label': 'Kind of field ' + n },
			FIELD_KINDS.map(function (k) {
				return el('option', { value: k[0], text: k[1], selected: preset.kind === k[0] });
			}),
		);
		var options = el('input', {
			testid: 'field-options-' + n,
			'aria-label': 'Options of field ' + n,
			placeholder: 'Options, comma separated',
			value: preset.options || '',
		});
		var readOnly = el('input', {
			type: 'checkbox',
			testid: 'field-readonly-' + n,
			checked: !!preset.readOnly,
		});
		function sync() {
			optionsLabel.hidden = kind.value !== 'single_selection';
		}
		kind.addEventListener('change', sync);
		var optionsLabel = el('label', { class: 'field-part' }, 'Options ', options);
		var row = el(
			'div',
			{ class: 'row field-row', testid: 'field-row-' + n },
			el('strong', { text: 'Field ' + n }),
			el(
				'label',
				{ class: 'field-part' },
				'Name ',
				el('input', {
					testid: 'field-name-' + n,
					'aria-label': 'Name of field ' + n,
					placeholder: 'e.g. Customer message',
					value: preset.name || '',
				}),
			),
			el(
				'label',
				{ class: 'field-part' },
				'ID ',
				el('input', {
					testid: 'field-id-' + n,
					'aria-label': 'ID of field ' + n,
					placeholder: 'empty: from the name',
					value: preset.id || '',
				}),
			),
			el('label', { class: 'field-part' }, 'Kind ', kind),
			el('label', {}, readOnly, ' read-only (people see it, cannot change it)'),
			optionsLabel,
		);
		row.read = function () {
			var inputs = row.querySelectorAll('input');
			return {
				name: inputs[0].value,
				id: inputs[1].value,
				kind: kind.value,
				readOnly: readOnly.checked,
				options: options.value,
			};
		};
		sync();
		list.appendChild(row);
	}

	/** An admin makes a queue with the fields they need, as in the real service's UI. */
	function newQueueForm(org) {
		var user = currentUser();
		var status = el('div', { testid: 'new-queue-status' });
		var name = el('input', {
			testid: 'new-queue-name',
			'aria-label': 'Queue name',
			placeholder: 'Queue name',
		});
		var list = el('div', { class: 'fields', testid: 'new-queue-fields' });
		fieldRow(list, { name: 'Question', id: 'question', kind: 'text', readOnly: true });
		fieldRow(list, { name: 'Answer', id: 'answer', kind: 'text' });
		return el(
			'details',
			{ class: 'new-queue', testid: 'new-queue-' + org.id },
			el('summary', { text: 'New queue (admin): make a queue with the fields you need' }),
			el(
				'p',
				{ class: 'muted' },
				'Fields marked read-only are filled when a task is created (by n8n) and shown to people; ' +
					'the others people fill in. For Create and Wait add the read-only field for the address.',
			),
			el('label', {}, 'Queue name ', name),
			el('h4', { text: 'Fields, in the order people see them' }),
			list,
			el(
				'div',
				{ class: 'row' },
				el(
					'button',
					{
						class: 'secondary',
						type: 'button',
						testid: 'add-field',
						onclick: function () {
							fieldRow(list, { kind: 'text' });
						},
					},
					'Add a field',
				),
				el(
					'button',
					{
						class: 'secondary',
						type: 'button',
						testid: 'add-address-field',
						onclick: function () {
							fieldRow(list, {
								name: 'Resume address (n8n fills it)',
								id: 'resume_url',
								kind: 'text',
								readOnly: true,
							});
						},
					},
					'Add the address field for Create and Wait',
				),
				el(
					'button',
					{
						type: 'button',
						testid: 'create-queue',
						onclick: function () {
							var fields = Array.prototype.map.call(list.children, function (row) {
								return row.read();
							});
							api('POST', '/orgs/' + org.id + '/queues', {
								email: user.email,
								name: name.value,
								fields: fields,
							})
								.then(function (queue) {
									notice = 'Queue ' + queue.id + ' "' + queue.name + '" created.';
									return renderHome();
								})
								.catch(function (e) {
									status.replaceChildren(message('error', e.message, 'new-queue-error'));
								});
						},
					},
					'Create the queue',
				),
			),
			status,
		);
	}

	// ---- showing input values --------------------------------------------------------------

	function urlLink(value) {
		return el('a', { href: value, target: '_blank', rel: 'noopener', text: value });
	}

	function showValue(block, value) {
		if (value === null || value === undefined || value === '')
			return el('span', { class: 'muted', text: '—' });
		switch (block.type) {
			case 'image': {
				var box = el('div', {});
				var img = el('img', {
					class: 'preview',
					src: value,
					alt: block.name,
					testid: 'preview-' + block.id,
				});
				img.addEventListener('error', function () {
					img.replaceWith(el('div', { class: 'img-missing', text: 'image preview not reachable' }));
				});
				box.append(img, urlLink(value));
				return box;
			}
			case 'audio':
				return el(
					'div',
					{},
					el('audio', { controls: true, src: value, preload: 'none' }),
					el('div', {}, urlLink(value)),
				);
			case 'video':
				return el(
					'div',
					{},
					el('video', { controls: true, src: value, preload: 'none', width: '320' }),
					el('div', {}, urlLink(value)),
				);
			case 'link':
			case 'pdf':
			case 'embed':
				return urlLink(value);
			case 'email':
				return el('a', { href: 'mailto:' + value, text: value });
			case 'rich_text':
				// shown as plain text: the markup is not trusted
				return el('span', {
					text: new DOMParser().parseFromString(String(value), 'text/html').body.textContent || '',
				});
			case 'binary':
				return el('span', {
					text: value === true ? 'Yes' : value === false ? 'No' : String(value),
				});
			case 'single_selection': {
				var opt = optionList(block).find(function (o) {
					return o.id === value;
				});
				return el('span', { text: opt ? opt.name : String(value) });
			}
			case 'multiple_selection':
			case 'list':
			case 'text_sequence':
				return el(
					'ul',
					{},
					(Array.isArray(value) ? value : [value]).map(function (v) {
						return el('li', { text: String(v) });
					}),
				);
			case 'named_entity_recognition': {
				if (typeof value === 'string') return el('span', { text: value });
				var text = String(value.text || '');
				var parts = [];
				var pos = 0;
				(value.entities || [])
					.slice()
					.sort(function (a, b) {
						return a.start - b.start;
					})
					.forEach(function (e) {
						if (e.start < pos) return;
						parts.push(text.slice(pos, e.start));
						parts.push(
							el('mark', {}, text.slice(e.start, e.end), el('small', { text: e.category })),
						);
						pos = e.end;
					});
				parts.push(text.slice(pos));
				return el('span', {}, parts);
			}
			case 'bounding_boxes':
				return el(
					'div',
					{},
					urlLink(String(value.image || '')),
					el(
						'ul',
						{},
						(value.objects || []).map(function (o) {
							return el('li', {
								text: o.category + ' at x ' + o.x + ', y ' + o.y + ', ' + o.w + ' × ' + o.h,
							});
						}),
					),
				);
			case 'form_sequence':
				return el(
					'dl',
					{},
					(settingsOf(block).data || [])
						.map(function (sub) {
							return [
								el('dt', { text: sub.name || sub.id }),
								el('dd', {}, showValue(sub, value[sub.id])),
							];
						})
						.reduce(function (a, b) {
							return a.concat(b);
						}, []),
				);
			default:
				return el('span', {
					text: typeof value === 'object' ? JSON.stringify(value) : String(value),
				});
		}
	}

	// ---- the form --------------------------------------------------------------------------

	/** Returns {node, read()} where read() gives the value, or undefined to leave it unset. */
	function fieldFor(block, value, prefix) {
		var s = settingsOf(block);
		var id = 'field-' + prefix + block.id;
		var label = el(
			'label',
			{ for: id },
			block.name || block.id,
			s.is_required ? el('span', { class: 'req', text: ' *' }) : null,
		);
		var common = {
			id: id,
			name: block.id,
			testid: id,
			placeholder: s.placeholder,
			required: !!s.is_required && block.type !== 'binary',
		};
		var input;
		var read;
		switch (block.type) {
			case 'rich_text':
				input = el('textarea', common);
				input.value = value || '';
				read = function () {
					return input.value === '' ? undefined : input.value;
				};
				break;
			case 'number':
				input = el('input', Object.assign({ type: 'number', step: 'any' }, common));
				input.value = value === null || value === undefined ? '' : String(value);
				read = function () {
					return input.value === '' ? undefined : Number(input.value);
				};
				break;
			case 'binary':
				input = el('input', Object.assign({ type: 'checkbox' }, common));
				input.checked = value === true;
				return {
					node: el(
						'div',
						{ class: 'field checks' },
						el('label', { for: id }, input, block.name || block.id),
					),
					read: function () {
						return input.checked;
					},
				};
			case 'date':
				input = el('input', Object.assign({ type: 'date' }, common));
				input.value = typeof value === 'string' ? value.slice(0, 10) : '';
				read = function () {
					return input.value === '' ? undefined : input.value;
				};
				break;
			case 'email':
				input = el('input', Object.assign({ type: 'email' }, common));
				input.value = value || '';
				read = function () {
					return input.value === '' ? undefined : input.value;
				};
				break;
			case 'link':
				input = el('input', Object.assign({ type: 'url' }, common));
				input.value = value || '';
				read = function () {
					return input.value === '' ? undefined : input.value;
				};
				break;
			case 'single_selection':
				input = el(
					'select',
					common,
					el('option', { value: '', text: 'Choose…' }),
					optionList(block).map(function (o) {
						return el('option', { value: o.id, text: o.name });
					}),
				);
				input.value = value || '';
				read = function () {
					return input.value === '' ? undefined : input.value;
				};
				break;
			case 'multiple_selection': {
				var boxes = optionList(block).map(function (o) {
					var cb = el('input', {
						type: 'checkbox',
						value: o.id,
						testid: id + '-' + o.id,
						id: id + '-' + o.id,
					});
					cb.checked = Array.isArray(value) && value.indexOf(o.id) !== -1;
					return cb;
				});
				return {
					node: el(
						'div',
						{ class: 'field checks', testid: id, role: 'group', 'aria-label': block.name },
						el('span', { class: 'label', text: block.name || block.id }),
						boxes.map(function (cb, i) {
							return el('label', { for: cb.id }, cb, optionList(block)[i].name);
						}),
					),
					read: function () {
						return boxes
							.filter(function (b) {
								return b.checked;
							})
							.map(function (b) {
								return b.value;
							});
					},
				};
			}
			case 'list':
			case 'text_sequence': {
				var numeric = s.subtype === 'number';
				input = el(
					'textarea',
					Object.assign({}, common, { placeholder: s.placeholder || 'One per line' }),
				);
				input.value = Array.isArray(value) ? value.join('\n') : '';
				read = function () {
					var lines = input.value
						.split('\n')
						.map(function (l) {
							return l.trim();
						})
						.filter(Boolean);
					if (lines.length === 0) return undefined;
					return numeric ? lines.map(Number) : lines;
				};
				break;
			}
			case 'form_sequence': {
				var subs = (s.data || []).map(function (sub) {
					return {
						id: sub.id,
						f: fieldFor(sub, value ? value[sub.id] : null, prefix + block.id + '-'),
					};
				});
				return {
					node: el(
						'fieldset',
						{ class: 'field', testid: id },
						el('legend', { text: block.name || block.id }),
						subs.map(function (x) {
							return x.f.node;
						}),
					),
					read: function () {
						var out = {};
						var any = false;
						subs.forEach(function (x) {
							var v = x.f.read();
							if (v !== undefined) {
								out[x.id] = v;
								any = true;
							}
						});
						return any ? out : undefined;
					},
				};
			}
			default:
				input = el('input', Object.assign({ type: 'text' }, common));
				input.value = value === null || value === undefined ? '' : String(value);
				read = function () {
					return input.value === '' ? undefined : input.value;
				};
		}
		return { node: el('div', { class: 'field' }, label, input), read: read };
	}

	// ---- a queue ---------------------------------------------------------------------------

	var flash = null;

	function renderQueue(queueId) {
		var user = currentUser();
		return api('GET', '/queues/' + queueId).then(function (queue) {
			var isMember =
				user &&
				user.organizations.some(function (o) {
					return o.id === queue.org_id;
				});
			var header = el(
				'div',
				{ class: 'row' },
				el(
					'div',
					{},
					el('h1', { testid: 'queue-name', text: queue.name }),
					el(
						'div',
						{ class: 'muted' },
						'Queue ',
						el('code', { testid: 'queue-id', text: String(queue.id) }),
						' · organization ' + queue.org_id + ' · ',
						el('span', { testid: 'queue-pending', text: String(queue.n_waiting) }),
						' waiting · ',
						el('span', { testid: 'queue-in-progress', text: String(queue.n_in_progress) }),
						' in progress',
					),
					queue.task_description ? el('p', { class: 'muted', text: queue.task_description }) : null,
				),
				el('div', { class: 'spacer' }),
				link('/app/', { class: 'button secondary', testid: 'back-to-queues' }, 'All queues'),
			);
			var parts = [header];
			if (flash) {
				parts.push(flash);
				flash = null;
			}
			if (!user) {
				parts.push(
					el(
						'div',
						{ class: 'card' },
						el('p', { text: 'Pick who you are (top right) to work on this queue.' }),
					),
				);
				main.replaceChildren.apply(main, parts);
				return;
			}
			if (!isMember) {
				parts.push(
					message(
						'error',
						user.name + ' is not a member of this queue’s organization.',
						'not-member',
					),
				);
				main.replaceChildren.apply(main, parts);
				return;
			}
			var work = el(
				'section',
				{ class: 'card', testid: 'work-area' },
				el('h2', { text: 'Work' }),
				el('p', {
					class: 'muted',
					text: 'Take the next pending task, or open a given one below; it becomes yours (in progress) until you complete it.',
				}),
				el(
					'button',
					{
						testid: 'take-next',
						onclick: function () {
							takeNext(queue, work);
						},
					},
					'Take next task',
				),
			);
			parts.push(
				work,
				el(
					'section',
					{ class: 'card', testid: 'pending' },
					el('h2', { text: 'Pending tasks' }),
					el('p', { class: 'muted', text: 'Loading…' }),
				),
				connections(queue, user),
				el(
					'section',
					{ class: 'card', testid: 'recent' },
					el('h2', { text: 'Recently completed' }),
					el('p', { class: 'muted', text: 'Loading…' }),
				),
				el(
					'section',
					{ class: 'card', testid: 'insights' },
					el('h2', { text: 'Insights: the last 7 days' }),
					el('p', { class: 'muted', text: 'Loading…' }),
				),
			);
			main.replaceChildren.apply(main, parts);
			loadPending(queue, work);
			loadRecent(queue);
			loadInsights(queue);
		});
	}

	/** A table with these column headings and rows. */
	function table(headings, rows) {
		return el(
			'table',
			{},
			el(
				'thead',
				{},
				el(
					'tr',
					{},
					headings.map(function (h) {
						return el('th', { text: h });
					}),
				),
			),
			el('tbody', {}, rows),
		);
	}

	/** Every pending task, newest first, each with an Open button: find and complete a given task. */
	function loadPending(queue, work) {
		api('GET', '/queues/' + queue.id + '/pending').then(function (tasks) {
			var box = main.querySelector('[data-testid=pending]');
			if (!box) return;
			var inputs = queue.data.filter(function (b) {
				return !isFilledByPeople(b);
			});
			box.replaceChildren(
				el('h2', { text: 'Pending tasks' }),
				tasks.length === 0
					? el('p', { class: 'muted', text: 'None.' })
					: table(
							['Task', 'Created at', 'Status', 'Inputs', ''],
							tasks.map(function (t) {
								var summary = inputs
									.map(function (b) {
										var v = t.data[b.id];
										return v === null || v === undefined
											? null
											: typeof v === 'object'
												? JSON.stringify(v)
												: String(v);
									})
									.filter(Boolean)
									.join(' · ');
								return el(
									'tr',
									{ testid: 'pending-row-' + t.id },
									el('td', { text: '#' + t.id }),
									el('td', { text: t.created_at }),
									el('td', {
										text:
											t.status === 'in_progress'
												? 'in progress (' + (t.assigned_to || '?') + ')'
												: 'waiting',
									}),
									el('td', { text: summary.length > 80 ? summary.slice(0, 77) + '...' : summary }),
									el(
										'td',
										{},
										el(
											'button',
											{
												class: 'secondary',
												testid: 'open-task-' + t.id,
												onclick: function () {
													take(queue, work, t.id);
												},
											},
											'Open',
										),
									),
								);
							}),
						),
			);
		});
	}

	function takeNext(queue, work) {
		take(queue, work, undefined);
	}

	function take(queue, work, taskId) {
		var user = currentUser();
		api('POST', '/queues/' + queue.id + '/take', { email: user.email, taskId: taskId })
			.then(function (r) {
				if (!r.task) {
					work.replaceChildren(
						el('h2', { text: 'Work' }),
						message('ok', 'No pending task in this queue. Well done!', 'no-task'),
					);
					return;
				}
				renderTask(queue, r.task, work);
				work.scrollIntoView();
			})
			.catch(function (e) {
				work.prepend(message('error', e.message, 'form-error'));
			});
	}

	function renderTask(queue, task, work) {
		var inputs = queue.data.filter(function (b) {
			return !isFilledByPeople(b);
		});
		var filled = queue.data.filter(isFilledByPeople);
		var fields = filled.map(function (b) {
			return { block: b, f: fieldFor(b, task.data[b.id], '') };
		});
		var errorBox = el('div', {});
		var form = el(
			'form',
			{ testid: 'task-form', novalidate: true },
			fields.map(function (x) {
				return x.f.node;
			}),
			errorBox,
			el(
				'div',
				{ class: 'row' },
				el('button', { type: 'submit', testid: 'complete-task' }, 'Complete task'),
				el(
					'button',
					{
						type: 'button',
						class: 'secondary',
						testid: 'release-task',
						onclick: function () {
							api('POST', '/queues/' + queue.id + '/tasks/' + task.id + '/release', {
								email: currentUser().email,
							}).then(function () {
								route();
							});
						},
					},
					'Give back',
				),
			),
		);
		form.addEventListener('submit', function (e) {
			e.preventDefault();
			var data = {};
			var missing = [];
			fields.forEach(function (x) {
				var v = x.f.read();
				if (v !== undefined) data[x.block.id] = v;
				else if (settingsOf(x.block).is_required) missing.push(x.block.name || x.block.id);
			});
			if (missing.length) {
				errorBox.replaceChildren(
					message('error', 'Please fill in: ' + missing.join(', '), 'form-error'),
				);
				return;
			}
			form.querySelector('[data-testid=complete-task]').disabled = true;
			api('POST', '/queues/' + queue.id + '/tasks/' + task.id + '/complete', {
				email: currentUser().email,
				data: data,
			})
				.then(function (r) {
					flash = message(
						'ok',
						'Task #' +
							r.task.id +
							' completed' +
							(queue.webhook && queue.webhook.target ? ' and sent to the webhook.' : '.'),
						'completed-message',
					);
					return renderQueue(queue.id);
				})
				.catch(function (err) {
					form.querySelector('[data-testid=complete-task]').disabled = false;
					errorBox.replaceChildren(message('error', err.message, 'form-error'));
				});
		});
		work.replaceChildren(
			el(
				'div',
				{ class: 'row' },
				el('h2', { text: 'Task #' + task.id }),
				el('span', { class: 'badge', testid: 'task-status', text: task.status.replace('_', ' ') }),
			),
			el(
				'div',
				{ class: 'two-col', testid: 'task-' + task.id },
				el(
					'div',
					{},
					el('h2', { text: 'Input' }),
					inputs.length === 0
						? el('p', { class: 'muted', text: 'No input values.' })
						: el(
								'dl',
								{ class: 'inputs', testid: 'task-inputs' },
								inputs
									.map(function (b) {
										return [
											el('dt', { text: b.name || b.id }),
											el('dd', { testid: 'input-' + b.id }, showValue(b, task.data[b.id])),
										];
									})
									.reduce(function (a, b) {
										return a.concat(b);
									}, []),
							),
				),
				el('div', {}, el('h2', { text: 'Your answer' }), form),
			),
		);
	}

	function connections(queue, user) {
		var input = el('input', {
			type: 'url',
			id: 'webhook-target',
			testid: 'webhook-target',
			placeholder: 'https://example.com/hook',
			'aria-label': 'Webhook URL',
		});
		input.value = (queue.webhook && queue.webhook.target) || '';
		var status = el('div', {});
		return el(
			'section',
			{ class: 'card', testid: 'connections' },
			el('h2', { text: 'Connections' }),
			el('p', {
				class: 'muted',
				text: 'One webhook per queue: it receives a POST each time a task here is completed.',
			}),
			el(
				'form',
				{
					class: 'row',
					onsubmit: function (e) {
						e.preventDefault();
						api('PUT', '/queues/' + queue.id + '/webhook', {
							email: user.email,
							target: input.value,
						})
							.then(function () {
								status.replaceChildren(
									message(
										'ok',
										input.value ? 'Webhook saved.' : 'Webhook removed.',
										'webhook-saved',
									),
								);
							})
							.catch(function (err) {
								status.replaceChildren(message('error', err.message, 'webhook-error'));
							});
					},
				},
				el('div', { class: 'spacer' }, input),
				el('button', { type: 'submit', class: 'secondary', testid: 'webhook-save' }, 'Save'),
			),
			status,
		);
	}

	function loadRecent(queue) {
		api('GET', '/queues/' + queue.id + '/completed').then(function (tasks) {
			var box = main.querySelector('[data-testid=recent]');
			if (!box) return;
			box.replaceChildren(
				el('h2', { text: 'Recently completed' }),
				tasks.length === 0
					? el('p', { class: 'muted', text: 'None yet.' })
					: table(
							['Task', 'Completed at', 'By', 'Values'],
							tasks.map(function (t) {
								var values = queue.data
									.filter(isFilledByPeople)
									.map(function (b) {
										var v = t.data[b.id];
										return v === null || v === undefined
											? null
											: b.id + ': ' + (typeof v === 'object' ? JSON.stringify(v) : String(v));
									})
									.filter(Boolean)
									.join(' · ');
								return el(
									'tr',
									{ testid: 'completed-row-' + t.id },
									el('td', { text: '#' + t.id }),
									el('td', { text: t.completed_at }),
									el('td', { text: t.completed_by || '' }),
									el('td', { text: values }),
								);
							}),
						),
			);
		});
	}

	/** Seconds as a person reads them (the exact value in data-seconds). */
	function duration(seconds, testid) {
		var text =
			seconds === null
				? '–'
				: seconds < 120
					? seconds.toFixed(1) + ' s'
					: seconds < 7200
						? (seconds / 60).toFixed(1) + ' min'
						: (seconds / 3600).toFixed(1) + ' h';
		return el('td', {
			testid: testid,
			'data-seconds': seconds === null ? '' : String(seconds),
			text: text,
		});
	}

	function percent(share) {
		return share === null ? '–' : Math.round(share * 1000) / 10 + '%';
	}

	/** What Queue > Get Insights returns for its default window, computed by the sandbox itself. */
	function loadInsights(queue) {
		api('GET', '/queues/' + queue.id + '/insights').then(function (f) {
			var box = main.querySelector('[data-testid=insights]');
			if (!box) return;
			box.replaceChildren(
				el('h2', { text: 'Insights: the last 7 days' }),
				el('p', {
					class: 'muted',
					text:
						'What Queue > Get Insights returns by default (from ' +
						f.window.from +
						' to ' +
						f.window.to +
						'): time from a task’s creation to its completion, and the share within the target of 4 hours.',
				}),
				table(
					['Pending', 'Completed', 'p50', 'p90', 'Within 4 h'],
					[
						el(
							'tr',
							{},
							el('td', { testid: 'insights-pending', text: String(f.pending) }),
							el('td', { testid: 'insights-completed', text: String(f.completed) }),
							duration(f.p50, 'insights-p50'),
							duration(f.p90, 'insights-p90'),
							el('td', { testid: 'insights-within', text: percent(f.withinTarget) }),
						),
					],
				),
				f.people.length === 0
					? el('p', { class: 'muted', text: 'Nobody completed a task in the window.' })
					: table(
							['Person', 'Completed', 'Share', 'p50', 'p90'],
							f.people.map(function (p) {
								return el(
									'tr',
									{ testid: 'insights-person' },
									el('td', { testid: 'insights-person-name', text: p.person || '(nobody named)' }),
									el('td', { testid: 'insights-person-completed', text: String(p.completed) }),
									el('td', { text: percent(p.share) }),
									duration(p.p50, 'insights-person-p50'),
									duration(p.p90, 'insights-person-p90'),
								);
							}),
						),
			);
		});
	}

	// ---- routing ---------------------------------------------------------------------------

	function route() {
		var m = /^\/app\/queues\/(\d+)/.exec(location.pathname);
		var p = m ? renderQueue(Number(m[1])) : renderHome();
		return p.catch(function (e) {
			main.replaceChildren(message('error', e.message, 'page-error'));
		});
	}

	window.addEventListener('popstate', route);
	loadUsers().then(route);
})();
