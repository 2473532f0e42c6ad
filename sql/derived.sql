-- Columns the loader derives from a payment's own JSON (transform/
-- payment_detail.go), filled here for rows loaded without them: by a recon
-- before migration 0073, or restored from such a run's state for a replay.
-- Each statement touches only rows still missing them, so it can run again.

-- Node types of the execution_results: from the lowest and highest
-- execution_result_order of the payment's rows.
UPDATE payment_execution_results r SET
    sender_node_type = CASE WHEN r.execution_result_order = e.first_order THEN 'INITIAL' ELSE 'INTERMEDIATE' END,
    receiver_node_type = CASE WHEN r.execution_result_order = e.last_order THEN 'TERMINAL' ELSE 'INTERMEDIATE' END
FROM (SELECT payment_id, min(execution_result_order) AS first_order, max(execution_result_order) AS last_order
      FROM payment_execution_results
      WHERE result_list = 'execution' AND payment_id IN (SELECT payment_id FROM payment_execution_results
                                                         WHERE result_list = 'execution' AND sender_node_type IS NULL)
      GROUP BY payment_id) e
WHERE r.payment_id = e.payment_id AND r.result_list = 'execution' AND r.sender_node_type IS NULL;

-- The payment's type and method, copied onto its execution results.
UPDATE payment_execution_results r SET payment_type = p.payment_type, payment_method = p.payment_method
FROM payments p
WHERE p.payment_id = r.payment_id AND r.payment_type IS NULL AND r.payment_method IS NULL
  AND (p.payment_type IS NOT NULL OR p.payment_method IS NOT NULL);

-- Whether fee_info.total_fees and the TRANSFER execution results' fees add
-- up differently in some currency.
UPDATE payments SET fee_totals_differ = payment_id IN (
    SELECT payment_id
    FROM (SELECT payment_id, fee_currency AS currency, total_fee AS d FROM payment_fees
          UNION ALL
          SELECT payment_id, transfer_currency_code, -(coalesce(sending_fee, 0) + coalesce(receiving_fee, 0))
          FROM payment_execution_results WHERE result_list = 'execution' AND execution_result_type = 'TRANSFER')
    GROUP BY payment_id, currency
    HAVING sum(d) <> 0)
WHERE fee_totals_differ IS NULL;
