SELECT a.customer_id, a.amount
FROM (
    SELECT customer_id, amount
    FROM (
        SELECT customer_id, amount,
            ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount DESC) AS rn
        FROM source('orders')
    )
    WHERE rn = 1
) AS a
JOIN source('orders') AS b ON a.customer_id = b.customer_id
