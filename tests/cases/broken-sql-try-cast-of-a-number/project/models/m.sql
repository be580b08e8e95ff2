SELECT order_id, TRY_CAST(amount AS INT) AS whole FROM source('orders')
