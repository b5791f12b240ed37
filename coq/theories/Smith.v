(** * Smith: the Smith form of a matrix of truncated series, and App. D.3.

    [smith_form m J s z]: over the ring [Q[t]/(t^m)], [J] (N x P, [P =
    length s + z]) has the Smith form [diag(t^s_1, ..., t^s_r, 0, ..., 0)]
    with [z] zeros: there are square matrices [B] (P x P) and [G] (N x N)
    over [Q[t]/(t^m)] whose values at [t = 0] are nonsingular (so [B] and
    [G] are invertible: the ring is local) with [J B = G D]; the orders [s]
    are sorted and below [m].  These are the Smith orders of [J] below
    [t^m]; the [z] remaining ones are at least [m].

    [smith_of_frame] is App. D.3 with the kernel: if the columns of [J B]
    for [B = (e_vis | xi)] are divisible by [t^s_c] (the visible columns),
    resp. zero mod [t^m] (the kernel directions [xi]), [B(0)] is
    nonsingular, and the divided frame [E(0)] (coefficient [s_c] of column
    [c]) has a nonsingular [r x r] minor on rows [I], then [smith_form]. *)

From Coq Require Import List QArith ZArith Lia Arith Sorted.
From Symattn Require Import Alg Series Network Rank.
Import ListNotations.
Local Open Scope Q_scope.

Definition SM := list (list (list Q)).

Definition coef (s : list Q) (k : nat) : Q := nth k s 0.

Definition ser_eq (m : nat) (s s' : list Q) : Prop := forall k, (k < m)%nat -> coef s k == coef s' k.

Definition smat_eq (m : nat) (A B : SM) : Prop := Forall2 (Forall2 (ser_eq m)) A B.

(** Column [j] of [B], and the product of [A] with a matrix [B] of [n2] columns. *)
Definition gcol {X : Type} (B : list (list X)) (d : X) (j : nat) : list X := map (fun r => nth j r d) B.

Definition gmat_mul (S : alg) (n2 : nat) (A B : list (list (car S))) : list (list (car S)) :=
  map (fun row => map (fun j => dot S row (gcol B zero j)) (seq 0 n2)) A.

Definition smat_mul (m n2 : nat) (A B : SM) : SM := gmat_mul (series_alg Qalg m) n2 A B.

(** The value at [t = 0]. *)
Definition const_part (A : SM) : QM := map (map (fun s => coef s 0)) A.

Definition monomial (k : nat) : list Q := repeat 0 k ++ [1].

(** [diag(t^s_1, ..., t^s_r)] in the top left corner of an N x P zero matrix. *)
Definition smith_diag (N P : nat) (s : list nat) : SM :=
  map (fun i => map (fun j => if andb (Nat.eqb i j) (Nat.ltb i (length s)) then monomial (nth i s O) else [])
                    (seq 0 P))
      (seq 0 N).

Definition smith_form (m : nat) (J : SM) (s : list nat) (z : nat) : Prop :=
  let N := length J in
  let P := (length s + z)%nat in
  Sorted le s /\ Forall (fun k => (k < m)%nat) s /\ (length s <= N)%nat /\
  Forall (fun row => length row = P) J /\
  exists B G : SM,
    length B = P /\ Forall (fun r => length r = P) B /\ nonsingular (const_part B) /\
    length G = N /\ Forall (fun r => length r = N) G /\ nonsingular (const_part G) /\
    smat_eq m (smat_mul m P J B) (smat_mul m P G (smith_diag N P s)).

(** ** Coefficients of sums and products *)

Lemma coef_nil k : coef [] k = 0.
Proof. destruct k; reflexivity. Qed.

Lemma coef_sadd a b k : coef (sadd Qalg a b) k == coef a k + coef b k.
Proof.
  revert b k; induction a; intros b k; simpl.
  - rewrite coef_nil; ring.
  - destruct b; simpl; [rewrite coef_nil; ring|].
    destruct k; unfold coef; simpl; [apply Qplus'_correct|apply IHa].
Qed.

Lemma coef_map_mul x b k : coef (map (Qmult' x) b) k == x * coef b k.
Proof.
  revert k; induction b; intros k; unfold coef; simpl.
  - destruct k; simpl; ring.
  - destruct k; simpl; [apply Qmult'_correct|apply IHb].
Qed.

Lemma coef_firstn n l k : (k < n)%nat -> coef (firstn n l) k = coef l k.
Proof.
  revert n k; induction l; intros n k H; destruct n; simpl; try lia; auto.
  destruct k; unfold coef; simpl; auto. apply IHl; lia.
Qed.

Lemma coef_smul m a b k : (k < m)%nat ->
  coef (smul_tr Qalg m a b) k == sumq (S k) (fun i => coef a i * coef b (k - i)).
Proof.
  revert a b k; induction m; intros a b k Hk; [lia|].
  destruct a as [|x a'].
  - simpl smul_tr; rewrite coef_nil; symmetry; apply sumq_zero; intros; rewrite coef_nil; ring.
  - destruct b as [|y b'].
    + simpl smul_tr; rewrite coef_nil; symmetry; apply sumq_zero; intros; rewrite coef_nil; ring.
    + change (smul_tr Qalg (S m) (x :: a') (y :: b'))
        with (Qmult' x y :: sadd Qalg (firstn m (sscale Qalg x b')) (smul_tr Qalg m a' (y :: b'))).
      destruct k.
      * unfold coef; simpl; rewrite Qmult'_correct; ring.
      * change (coef (_ :: ?l) (S k)) with (coef l k).
        rewrite coef_sadd, coef_firstn by lia. unfold sscale. simpl mul.
        rewrite coef_map_mul, IHm by lia.
        rewrite (sumq_shift (S k)).
        change (coef (x :: a') 0) with x. replace (S k - 0)%nat with (S k) by lia.
        change (coef (y :: b') (S k)) with (coef b' k).
        apply Qplus_comp; [reflexivity|].
        apply sumq_ext; intros i Hi.
        change (coef (x :: a') (S i)) with (coef a' i).
        replace (S k - S i)%nat with (k - i)%nat by lia. reflexivity.
Qed.

Lemma coef_fold_sadd l acc k :
  coef (fold_left (sadd Qalg) l acc) k == coef acc k + sumq (length l) (fun j => coef (nth j l []) k).
Proof.
  revert acc; induction l; intros acc; cbn [fold_left length]; [simpl; ring|].
  rewrite IHl, sumq_shift, coef_sadd; simpl; ring.
Qed.

Lemma coef_monomial s j : coef (monomial s) j == if Nat.eqb j s then 1 else 0.
Proof.
  unfold coef, monomial. destruct (Nat.eqb_spec j s).
  - subst; rewrite app_nth2; rewrite repeat_length; [|lia]. rewrite Nat.sub_diag; reflexivity.
  - destruct (Nat.lt_ge_cases j s).
    + rewrite app_nth1 by (rewrite repeat_length; lia). rewrite nth_repeat; reflexivity.
    + rewrite app_nth2 by (rewrite repeat_length; lia). rewrite repeat_length.
      destruct (j - s)%nat as [|[|n']] eqn:E; [lia|reflexivity|reflexivity].
Qed.

(** The coefficient [k] of a product with [t^s]. *)
Lemma coef_smul_monomial m g s k : (k < m)%nat ->
  coef (smul_tr Qalg m g (monomial s)) k == if Nat.leb s k then coef g (k - s) else 0.
Proof.
  intros Hk; rewrite coef_smul by auto.
  rewrite (sumq_ext _ _ (fun i => (if Nat.eqb (k - s) i then 1 else 0) * (if Nat.leb s k then coef g i else 0))).
  - destruct (Nat.leb_spec s k).
    + rewrite sumq_delta by lia; reflexivity.
    + apply sumq_zero; intros; ring.
  - intros i Hi. rewrite coef_monomial.
    destruct (Nat.eqb_spec (k - i) s), (Nat.eqb_spec (k - s) i), (Nat.leb_spec s k); try lia; try ring.
Qed.

Lemma coef_dot m x y k :
  coef (dot (series_alg Qalg m) x y) k ==
  sumq (length (zipw (smul_tr Qalg m) x y)) (fun l => coef (nth l (zipw (smul_tr Qalg m) x y) []) k).
Proof.
  unfold dot, vsum; simpl. rewrite coef_fold_sadd, coef_nil, Qplus_0_l; reflexivity.
Qed.

Lemma smul_nil_r (A : alg) m g : smul_tr A m g [] = [].
Proof. destruct m, g; reflexivity. Qed.

(** ** App. D.3 *)

Definition unit_ser (b : bool) : list Q := if b then [1] else [].

(** [B = (e_vis | xi)]: the visible coordinate vectors, then the kernel directions. *)
Definition frame_B (P : nat) (vis : list nat) (xi : list (list (list Q))) : SM :=
  map (fun r => map (fun c => if Nat.ltb c (length vis) then unit_ser (Nat.eqb r (nth c vis O))
                              else nth r (nth (c - length vis) xi []) [])
                    (seq 0 P))
      (seq 0 P).

Definition rest (N : nat) (I : list nat) : list nat :=
  filter (fun i => negb (existsb (Nat.eqb i) I)) (seq 0 N).

Section Frame.
Variables (m : nat) (J : SM) (s vis : list nat) (xi : list (list (list Q))) (I : list nat).

Let N := length J.
Let r := length s.
Let P := (r + length xi)%nat.
Let B := frame_B P vis xi.
Let JB := smat_mul m P J B.
Let entry (i c : nat) : list Q := nth c (nth i JB []) [].

(** The divided frame on rows [I]: coefficient [s_c] of column [c]. *)
Definition divided_frame : QM :=
  map (fun i => map (fun c => coef (entry i c) (nth c s O)) (seq 0 r)) I.

Let G : SM :=
  map (fun i => map (fun c => if Nat.ltb c r then skipn (nth c s O) (entry i c)
                              else unit_ser (Nat.eqb i (nth (c - r) (rest N I) O)))
                    (seq 0 N))
      (seq 0 N).

Hypothesis Hsorted : Sorted le s.
Hypothesis Hlt : Forall (fun k => (k < m)%nat) s.
Hypothesis Hvis : length vis = r.
Hypothesis HrN : (r <= N)%nat.
Hypothesis HJ : Forall (fun row => length row = P) J.
Hypothesis HB : nonsingular (const_part B).
Hypothesis Hval : forall i c k, (i < N)%nat -> (c < r)%nat -> (k < nth c s O)%nat -> coef (entry i c) k == 0.
Hypothesis Hker : forall i c k, (i < N)%nat -> (r <= c < P)%nat -> (k < m)%nat -> coef (entry i c) k == 0.
Hypothesis HI : NoDup I.
Hypothesis HIr : length I = r.
Hypothesis HIN : Forall (fun i => (i < N)%nat) I.
Hypothesis HE : nonsingular divided_frame.

Ltac norm := change (car (series_alg Qalg m)) with (list Q) in *; change (car Qalg) with Q in *.

Lemma length_JB : length JB = N.
Proof. unfold JB, smat_mul, gmat_mul; rewrite map_length; reflexivity. Qed.

Lemma nth_map_seq {X : Type} (f : nat -> X) n k d : (k < n)%nat -> nth k (map f (seq 0 n)) d = f k.
Proof.
  intros H. rewrite (nth_indep _ _ (f O)) by (rewrite map_length, seq_length; auto).
  rewrite map_nth, seq_nth by auto; reflexivity.
Qed.

Lemma G_entry i c : (i < N)%nat -> (c < N)%nat ->
  nth c (nth i G []) [] = if Nat.ltb c r then skipn (nth c s O) (entry i c)
                          else unit_ser (Nat.eqb i (nth (c - r) (rest N I) O)).
Proof.
  intros Hi Hc; unfold G. rewrite (nth_map_seq _ N i) by auto. rewrite (nth_map_seq _ N c) by auto.
  reflexivity.
Qed.

Lemma D_entry i c : (i < N)%nat -> (c < P)%nat ->
  nth c (nth i (smith_diag N P s) []) [] =
  if andb (Nat.eqb i c) (Nat.ltb i r) then monomial (nth i s O) else [].
Proof.
  intros Hi Hc; unfold smith_diag. rewrite (nth_map_seq _ N i) by auto.
  rewrite (nth_map_seq _ P c) by auto. reflexivity.
Qed.

Lemma GD_coef i c k : (i < N)%nat -> (c < P)%nat -> (k < m)%nat ->
  coef (nth c (nth i (smat_mul m P G (smith_diag N P s)) []) []) k ==
  if Nat.ltb c r then (if Nat.leb (nth c s O) k then coef (entry i c) k else 0) else 0.
Proof.
  intros Hi Hc Hk.
  unfold smat_mul, gmat_mul.
  assert (HGl : length G = N) by (unfold G; rewrite map_length, seq_length; auto).
  rewrite (nth_indep _ _ (map (fun j => dot (series_alg Qalg m) [] (gcol (smith_diag N P s) (@zero (series_alg Qalg m)) j)) (seq 0 P)))
    by (rewrite map_length; unfold G; rewrite map_length, seq_length; lia).
  rewrite (map_nth (fun row => map (fun j => dot (series_alg Qalg m) row (gcol (smith_diag N P s) (@zero (series_alg Qalg m)) j)) (seq 0 P)) G []).
  rewrite (nth_map_seq _ P c) by auto.
  rewrite coef_dot.
  assert (HGrow : length (nth i G []) = N).
  { unfold G. rewrite (nth_map_seq _ N i) by auto. rewrite map_length, seq_length; auto. }
  assert (HDcol : length (gcol (smith_diag N P s) (@zero (series_alg Qalg m)) c) = N).
  { unfold gcol, smith_diag; rewrite !map_length, seq_length; auto. }
  change (car (series_alg Qalg m)) with (list Q) in *; change (car Qalg) with Q in *.
  rewrite length_zipw, HGrow, HDcol, Nat.min_id.
  assert (Eterm : forall l, (l < N)%nat ->
     nth l (zipw (smul_tr Qalg m) (nth i G []) (gcol (smith_diag N P s) (@zero (series_alg Qalg m)) c)) [] =
     smul_tr Qalg m (nth l (nth i G []) []) (if andb (Nat.eqb l c) (Nat.ltb l r) then monomial (nth l s O) else [])).
  { intros l Hl. change (car (series_alg Qalg m)) with (list Q) in *; change (car Qalg) with Q in *.
    rewrite (nth_zipw _ _ _ _ [] []) by lia. f_equal.
    unfold gcol. rewrite (nth_map_lt _ _ []) by (unfold smith_diag; rewrite map_length, seq_length; auto).
    simpl zero. rewrite D_entry by auto. reflexivity. }
  rewrite (sumq_ext _ _ (fun l => (if Nat.eqb l c then 1 else 0) *
                                   coef (smul_tr Qalg m (nth l (nth i G []) [])
                                          (if Nat.ltb l r then monomial (nth l s O) else [])) k)).
  2:{ intros l Hl. rewrite Eterm by auto. destruct (Nat.eqb_spec l c); simpl.
      - subst; ring.
      - rewrite smul_nil_r, coef_nil; ring. }
  destruct (Nat.lt_ge_cases c N) as [HcN|HcN].
  - rewrite (sumq_ext _ _ (fun l => (if Nat.eqb c l then 1 else 0) *
                                     coef (smul_tr Qalg m (nth l (nth i G []) [])
                                            (if Nat.ltb l r then monomial (nth l s O) else [])) k)).
    2:{ intros l _; rewrite Nat.eqb_sym; reflexivity. }
    rewrite (sumq_delta N c (fun l => coef (smul_tr Qalg m (nth l (nth i G []) [])
                                             (if Nat.ltb l r then monomial (nth l s O) else [])) k)) by auto.
    rewrite G_entry by auto.
    destruct (Nat.ltb_spec c r).
    + rewrite coef_smul_monomial by auto.
      destruct (Nat.leb_spec (nth c s O) k); [|reflexivity].
      unfold coef; rewrite nth_skipn'. replace (nth c s O + (k - nth c s O))%nat with k by lia. reflexivity.
    + rewrite smul_nil_r, coef_nil; reflexivity.
  - (* c >= N > r: no diagonal entry in column c *)
    rewrite sumq_zero.
    + destruct (Nat.ltb_spec c r); [lia|reflexivity].
    + intros l Hl. destruct (Nat.eqb_spec l c); [lia|ring].
Qed.

Lemma JB_GD : smat_eq m JB (smat_mul m P G (smith_diag N P s)).
Proof.
  unfold smat_eq.
  assert (L1 : length JB = N) by apply length_JB.
  assert (L2 : length (smat_mul m P G (smith_diag N P s)) = N)
    by (unfold smat_mul, gmat_mul, G; rewrite !map_length, seq_length; auto).
  apply Forall2_of_nth; [lia|]. intros i rowA rowB Hi.
  rewrite L1 in Hi.
  assert (LA : length (nth i JB []) = P).
  { unfold JB, smat_mul, gmat_mul. rewrite (nth_map_lt _ _ []) by (norm; unfold N in Hi; lia).
    rewrite map_length, seq_length; auto. }
  assert (LB : length (nth i (smat_mul m P G (smith_diag N P s)) []) = P).
  { unfold smat_mul, gmat_mul. rewrite (nth_map_lt _ _ []) by (norm; unfold G; rewrite map_length, seq_length; lia).
    rewrite map_length, seq_length; auto. }
  rewrite (nth_indep JB rowA []) by lia.
  rewrite (nth_indep (smat_mul m P G (smith_diag N P s)) rowB []) by lia.
  apply Forall2_of_nth; [lia|]. intros c a b Hc; rewrite LA in Hc.
  intros k Hk.
  rewrite (nth_indep (nth i JB []) a []) by lia.
  rewrite (nth_indep (nth i (smat_mul m P G (smith_diag N P s)) []) b []) by lia.
  rewrite GD_coef by auto. fold (entry i c).
  destruct (Nat.ltb_spec c r).
  - destruct (Nat.leb_spec (nth c s O) k); [reflexivity|]. apply Hval; auto.
  - apply Hker; auto; lia.
Qed.

Ltac qlia := change (car Qalg) with Q in *; lia.

Lemma sumq_split n k f : (k <= n)%nat -> sumq n f == sumq k f + sumq (n - k) (fun u => f (k + u)%nat).
Proof.
  intros H; induction n.
  - replace k with O by lia; simpl; ring.
  - destruct (Nat.eq_dec k (S n)) as [->|E].
    + rewrite Nat.sub_diag; simpl; ring.
    + replace (S n - k)%nat with (S (n - k)) by lia. simpl. rewrite IHn by lia.
      replace (k + (n - k))%nat with n by lia. ring.
Qed.

Lemma rest_props : NoDup (rest N I) /\ length (rest N I) = (N - r)%nat /\
  (forall u, (u < N - r)%nat -> (nth u (rest N I) O < N)%nat /\ ~ In (nth u (rest N I) O) I).
Proof.
  assert (Hmem : forall i, existsb (Nat.eqb i) I = true <-> In i I).
  { intros i; rewrite existsb_exists; split.
    - intros [x [Hx E]]; apply Nat.eqb_eq in E; subst; auto.
    - intros H; exists i; split; auto; apply Nat.eqb_refl. }
  assert (Hnd : NoDup (rest N I)) by (apply NoDup_filter, seq_NoDup).
  assert (Hlen : length (rest N I) = (N - r)%nat).
  { assert (C : forall l, (length (filter (fun i => negb (existsb (Nat.eqb i) I)) l) +
                          length (filter (fun i => existsb (Nat.eqb i) I) l) = length l)%nat).
    { induction l; simpl; auto. destruct (existsb (Nat.eqb a) I); simpl; lia. }
    assert (E : length (filter (fun i => existsb (Nat.eqb i) I) (seq 0 N)) = r).
    { apply Nat.le_antisymm.
      - rewrite <- HIr. apply NoDup_incl_length; [apply NoDup_filter, seq_NoDup|].
        intros i Hi; apply filter_In in Hi as [_ Hi]; apply Hmem; auto.
      - rewrite <- HIr. apply NoDup_incl_length; auto.
        intros i Hi; apply filter_In; split; [|apply Hmem; auto].
        apply in_seq; rewrite Forall_forall in HIN; specialize (HIN i Hi); lia. }
    unfold rest; pose proof (C (seq 0 N)) as C'; rewrite E, seq_length in C'; lia. }
  split; [auto|split; [auto|]].
  intros u Hu.
  assert (Hin : In (nth u (rest N I) O) (rest N I)) by (apply nth_In; lia).
  unfold rest at 2 in Hin; apply filter_In in Hin as [Hs Hn].
  apply in_seq in Hs; split; [lia|].
  intros HI'; apply Hmem in HI'; rewrite HI' in Hn; discriminate.
Qed.

Lemma G0_entry i c : (i < N)%nat -> (c < N)%nat ->
  nth c (nth i (const_part G) []) 0 ==
  if Nat.ltb c r then coef (entry i c) (nth c s O) else (if Nat.eqb i (nth (c - r) (rest N I) O) then 1 else 0).
Proof.
  intros Hi Hc. unfold const_part.
  assert (HG : length G = N) by (unfold G; rewrite map_length, seq_length; auto).
  rewrite (nth_map_lt _ _ []) by qlia.
  assert (HGi : length (nth i G []) = N) by (unfold G; rewrite (nth_map_seq _ N i) by auto; rewrite map_length, seq_length; auto).
  rewrite (nth_map_lt _ _ []) by qlia.
  rewrite G_entry by auto.
  destruct (Nat.ltb c r).
  - unfold coef; rewrite nth_skipn', Nat.add_0_r; reflexivity.
  - destruct (Nat.eqb i (nth (c - r) (rest N I) O)); reflexivity.
Qed.

Lemma G_nonsingular : nonsingular (const_part G).
Proof.
  assert (HG : length G = N) by (unfold G; rewrite map_length, seq_length; auto).
  assert (HG0 : length (const_part G) = N) by (unfold const_part; rewrite map_length; auto).
  destruct rest_props as [Rnd [Rlen Rin]].
  split.
  - rewrite HG0. apply Forall_forall; intros row Hrow.
    unfold const_part, G in Hrow. rewrite map_map in Hrow. apply in_map_iff in Hrow as [i [<- Hi]].
    rewrite !map_length, seq_length; auto.
  - rewrite HG0. intros x Hx Hz.
    set (x' := fun j => nth j x 0).
    assert (Hrow : forall i, (i < N)%nat ->
              sumq r (fun c => coef (entry i c) (nth c s O) * x' c) +
              sumq (N - r) (fun u => (if Nat.eqb i (nth u (rest N I) O) then 1 else 0) * x' (r + u)%nat) == 0).
    { intros i Hi.
      apply qzero_nth with (k := i) in Hz; [|unfold qmat_vec, mat_vec; rewrite map_length; qlia].
      rewrite nth_qmat_vec in Hz by qlia.
      assert (Hl : length (nth i (const_part G) []) = N).
      { unfold const_part. rewrite (nth_map_lt _ _ []) by qlia. rewrite map_length.
        unfold G; rewrite (nth_map_seq _ N i) by auto; rewrite map_length, seq_length; auto. }
      rewrite (dot_sumq _ _ N) in Hz by (change (car Qalg) with Q in *; qlia).
      rewrite (sumq_split N r) in Hz by qlia.
      rewrite <- Hz. apply Qplus_comp; apply sumq_ext; intros c Hc.
      - rewrite G0_entry by qlia. destruct (Nat.ltb_spec c r); [reflexivity|qlia].
      - rewrite G0_entry by qlia. destruct (Nat.ltb_spec (r + c) r); [qlia|].
        replace (r + c - r)%nat with c by qlia. reflexivity. }
    assert (Hvis0 : forall c, (c < r)%nat -> x' c == 0).
    { pose proof HE as [_ HEf].
      unfold divided_frame in HEf. rewrite map_length, HIr in HEf.
      set (xr := map x' (seq 0 r)).
      assert (Hxr : length xr = r) by (unfold xr; rewrite map_length, seq_length; auto).
      specialize (HEf xr Hxr).
      assert (Q0 : qzero xr).
      { apply HEf. apply qzero_nth; intros l Hl.
        unfold qmat_vec, mat_vec in Hl; rewrite !map_length in Hl.
        unfold qmat_vec. rewrite nth_qmat_vec by (rewrite map_length; auto).
        rewrite (nth_map_lt _ _ O) by auto.
        set (i := nth l I O).
        assert (Hi : (i < N)%nat) by (rewrite Forall_forall in HIN; apply HIN, nth_In; qlia).
        rewrite (dot_sumq _ _ r) by (rewrite ?map_length, ?seq_length; auto).
        pose proof (Hrow i Hi) as Hri.
        rewrite (sumq_zero (N - r)) in Hri.
        - rewrite Qplus_0_r in Hri. rewrite <- Hri. apply sumq_ext; intros c Hc.
          rewrite (nth_map_seq _ r c) by auto. unfold xr; rewrite (nth_map_seq _ r c) by auto. reflexivity.
        - intros u Hu. destruct (Nat.eqb_spec i (nth u (rest N I) O)) as [E|E]; [|ring].
          exfalso; apply (proj2 (Rin u Hu)). rewrite <- E. apply nth_In; qlia. }
      intros c Hc. apply qzero_nth with (k := c) in Q0; [|qlia].
      unfold xr in Q0; rewrite (nth_map_seq _ r c) in Q0 by auto. auto. }
    assert (Hrest0 : forall u, (u < N - r)%nat -> x' (r + u)%nat == 0).
    { intros u Hu. destruct (Rin u Hu) as [Hlt0 _].
      pose proof (Hrow _ Hlt0) as H.
      rewrite (sumq_zero r) in H by (intros c Hc; rewrite Hvis0 by auto; ring).
      rewrite Qplus_0_l in H.
      rewrite (sumq_ext _ _ (fun u' => (if Nat.eqb u u' then 1 else 0) * x' (r + u')%nat)) in H.
      - rewrite sumq_delta in H by auto. auto.
      - intros u' Hu'. destruct (Nat.eqb_spec u u') as [->|E]; [rewrite Nat.eqb_refl; reflexivity|].
        destruct (Nat.eqb_spec (nth u (rest N I) O) (nth u' (rest N I) O)) as [E'|E']; [|reflexivity].
        exfalso; apply E. eapply NoDup_nth; eauto; qlia. }
    apply qzero_nth; intros c Hc.
    change (nth c x 0) with (x' c).
    destruct (Nat.lt_ge_cases c r); [apply Hvis0; auto|].
    replace c with (r + (c - r))%nat by qlia. apply Hrest0; qlia.
Qed.

Theorem smith_of_frame : smith_form m J s (length xi).
Proof.
  split; [auto|split; [auto|split; [auto|split; [auto|]]]].
  exists B, G.
  refine (conj _ (conj _ (conj HB (conj _ (conj _ (conj G_nonsingular JB_GD)))))).
  - unfold B, frame_B; rewrite map_length, seq_length; auto.
  - unfold B, frame_B; apply Forall_forall; intros row Hrow; apply in_map_iff in Hrow as [i [<- _]].
    rewrite map_length, seq_length; auto.
  - unfold G; rewrite map_length, seq_length; auto.
  - unfold G; apply Forall_forall; intros row Hrow; apply in_map_iff in Hrow as [i [<- _]].
    rewrite map_length, seq_length; auto.
Qed.

End Frame.
